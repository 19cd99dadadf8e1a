"""The board's kept rows (`jobs.rows.txt`) when the file holds junk: the whole file, or some entries, not of the
shape written. Each such row is made again from the job's state; the board shows what it shows with no kept file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from git_balanced.engine import kept as kept_rows
from git_balanced.git import Repo
from git_balanced.state import fragments
from tests.test_board_fast import lead  # noqa: F401 — the same lead: five landed, one failed, live ones
from tests.test_startup import both

BOARDS = [["board", "--all", "--json"], ["board"]]


def _shown(lead: Path) -> list[str]:  # noqa: F811
    out = []
    for args in BOARDS:
        ran = both(lead, args, None)[0]
        assert ran.code == 0 and "Traceback" not in ran.err, ran.err
        out.append(ran.out)
    return out


def test_junk_kept_rows_are_made_again(lead: Path) -> None:  # noqa: F811
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.txt"
    _shown(lead)
    text = rows.read_text()
    head = json.loads(text.split("\n", 1)[0])
    rows.unlink()
    plain = _shown(lead)
    body = text.split("\n", 1)[1]
    metas = (5, "x", None, [], [1, 2], ["a"] * 7, [*head["meta"][0][:4], "late", None, None])
    for whole in ("5", "[]", "not json", json.dumps({**head, "format": "0"}) + "\n" + body,
                  json.dumps({**head, "ends": [*head["ends"][:-1], len(body) + 1]}) + "\n" + body,
                  json.dumps({**head, "ends": head["ends"][::-1]}) + "\n" + body,
                  json.dumps({**head, "keys": head["keys"][1:]}) + "\n" + body,
                  json.dumps({**head, "refs": [5] * len(head["refs"])}) + "\n" + body):
        rows.write_text(whole)
        assert _shown(lead) == plain, whole
    count = len(head["refs"])
    for start in range(0, len(metas), count - 1):  # each shape of a row's fields, beside rows as written
        junk = [head["meta"][0]] + [metas[(start + k) % len(metas)] for k in range(count - 1)]
        rows.write_text(json.dumps({**head, "meta": junk}) + "\n" + body)
        assert _shown(lead) == plain, junk
    held = fragments.load(str(rows), head["made_by"])
    assert all(kept_rows._valid(held[ref][1]) for ref in head["refs"]), "made again, and kept"


def test_kept_rows_are_made_again_in_another_time_zone(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Two zones of the same standard-time name (EST, one with summer time): the rows kept in one are made again
    in the other, and each run's rows are the rows of a board with no kept file."""
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.txt"
    stamps = []
    try:
        for zone in ("EST5", "EST5EDT", "EST5"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            assert both(lead, ["board", "--all", "--json"], None)[0].code == 0
            made_by = json.loads(rows.read_text().split("\n", 1)[0])["made_by"]
            stamps.append((made_by, len(fragments.load(str(rows), made_by))))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert stamps[0][1] == 6 and stamps[0][0] != stamps[1][0] and stamps[2] == stamps[0], stamps


def test_a_kept_rows_fields_are_taken_only_in_the_shape_written() -> None:
    """kept._valid: META's fields in order, of their types (a bool is not a time), no more and no fewer."""
    good = ["j1", "p1", "api", "landed", 1.5, "abc", None]
    assert kept_rows._valid(good) and kept_rows._valid([*good[:4], 2, None, "node"])
    for bad in ([*good, None], good[:6], tuple(good), [*good[:4], True, None, None], [*good[:4], "1", None, None],
                [1, *good[1:]], [*good[:5], 5, None], [*good[:6], ["n"]], "x" * 7, None):
        assert not kept_rows._valid(bad), bad
