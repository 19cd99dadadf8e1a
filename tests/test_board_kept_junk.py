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
    good = head["entries"]
    body = text.split("\n", 1)[1]
    metas = (5, "x", None, [], [1, 2], ["a"] * 7, [*good[0][4][:4], "late", None, None])
    for whole in ("5", "[]", "not json", json.dumps({"format": "0", "entries": good}) + "\n" + body,
                  json.dumps({"format": head["format"], "entries": [[*good[0][:2], 0, len(body) + 1, good[0][4]]]})
                  + "\n" + body, json.dumps({"format": head["format"], "entries": [good[0][:4]]}) + "\n" + body):
        rows.write_text(whole)
        assert _shown(lead) == plain, whole
    for start in range(0, len(metas), len(good) - 1):  # each shape of a row's fields, beside rows as written
        junk = [good[0]] + [[*e[:4], metas[(start + k) % len(metas)]] for k, e in enumerate(good[1:])]
        rows.write_text(json.dumps({"format": head["format"], "entries": junk}) + "\n" + body)
        assert _shown(lead) == plain, junk
    held = fragments.load(str(rows))
    assert all(kept_rows._valid(held[e[0]][1]) for e in good), "made again, and kept"


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
            stamps.append({entry[0] for entry in fragments.load(str(rows)).values()})
    finally:
        monkeypatch.undo()
        time.tzset()
    assert len(stamps[0]) == 6 and not stamps[0] & stamps[1] and stamps[2] == stamps[0], stamps
