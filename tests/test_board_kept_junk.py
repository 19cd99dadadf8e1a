"""The board's kept rows (`jobs.rows.json`) when the file holds junk: the whole file, or some entries, not of the
shape written. Each such row is made again from the job's state; the board shows what it shows with no kept file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.state import cachefile
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
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.json"
    _shown(lead)
    good = json.loads(rows.read_text())
    rows.unlink()
    plain = _shown(lead)
    refs = sorted(good)
    tip = next(iter(good.values()))[0]
    entries = ([], 5, "x", [tip], [tip, 5], [tip, {"_json": 5}], [tip, {"no": "text"}], [tip, None, 1], None)
    for whole in ("5", "[]", "not json"):
        rows.write_text(whole)
        assert _shown(lead) == plain, whole
    for start in range(0, len(entries), len(refs) - 1):  # each shape of entry, beside kept rows as written
        junk = {**good, **{ref: entries[(start + k) % len(entries)] for k, ref in enumerate(refs[1:])}}
        rows.write_text(json.dumps(junk))
        assert _shown(lead) == plain, junk
    held = cachefile.load(str(rows))
    assert all(isinstance(held[ref][1].get("_json"), str) for ref in refs), "made again, and kept"


def test_kept_rows_are_made_again_in_another_time_zone(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Two zones of the same standard-time name (EST, one with summer time): the rows kept in one are made again
    in the other, and each run's rows are the rows of a board with no kept file."""
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.json"
    stamps = []
    try:
        for zone in ("EST5", "EST5EDT", "EST5"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            assert both(lead, ["board", "--all", "--json"], None)[0].code == 0
            stamps.append({entry[0] for entry in cachefile.load(str(rows)).values()})
    finally:
        monkeypatch.undo()
        time.tzset()
    assert len(stamps[0]) == 6 and not stamps[0] & stamps[1] and stamps[2] == stamps[0], stamps
