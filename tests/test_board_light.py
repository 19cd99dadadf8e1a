"""The board's read path stays light: with its cache warm, `board` and `board --all --json` load none of the
modules a fold or a process needs (state/health.py, state/fold.py, glob, signal), and `board --all` shows each
done job's row as kept beside the cache (`jobs.rows.txt`, with its JSON text, which `board --json` writes as it
is), made again when the job's ref moves or what makes the rows changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import ui
from git_balanced.engine import kept as kept_rows
from git_balanced.git import Repo
from git_balanced.state import cache, fragments, refs
from tests.test_board_fast import lead  # noqa: F401 — the same lead: five landed, one failed, live ones
from tests.test_startup import both

# Left out of the board's path: a fold's modules (its cache is warm), seats' glob, and what ends processes.
NOT_ON_THE_BOARD = ("git_balanced.state.health", "git_balanced.state.fold", "git_balanced.state.shapes", "glob",
                    "signal", "weakref")
BOARDS = [["board"], ["board", "--json"], ["board", "--all"], ["board", "--all", "--json"]]


def test_a_warm_board_loads_no_fold(lead: Path) -> None:  # noqa: F811
    """Each board in a fresh interpreter after one that warmed the cache: none of the modules named is loaded."""
    for args in BOARDS:
        assert both(lead, args, None)[0].code == 0  # the cache (and the kept rows) written
    script = ("import io, json, sys\nfrom git_balanced import front\nfound = {}\n"
              f"for args in {BOARDS!r}:\n"
              "    sys.stdout = io.StringIO()\n"
              "    code = front.main(args)\n"
              f"    found[' '.join(args)] = [code, sorted(m for m in {NOT_ON_THE_BOARD!r} if m in sys.modules)]\n"
              "sys.stdout = sys.__stdout__\nprint(json.dumps(found))\n")
    cp = subprocess.run([sys.executable, "-c", script], cwd=lead, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout) == {" ".join(args): [0, []] for args in BOARDS}, cp.stdout


def _rows_file(repo: Repo) -> Path:
    return repo.state_dir / "cache" / "jobs.rows.txt"


def test_all_shows_the_kept_rows_and_makes_them_again(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    repo = Repo.discover(lead)
    first, slow = both(lead, ["board", "--all", "--json"], None)
    assert first == slow and first.code == 0
    rows = _rows_file(repo)
    made_by = json.loads(rows.read_text().split("\n", 1)[0])["made_by"]
    kept = dict(fragments.load(str(rows), made_by))
    landed = sorted(ref for ref, (_, meta, _) in kept.items() if meta[3] == "landed")
    assert len(kept) == 6 and len(landed) == 5, "a row kept for each done job, none for the live ones"
    # A kept row is what the board shows: its words changed in the file (its text) are the words shown.
    ref = landed[0]
    key, meta, text = kept[ref]
    was = json.loads(text)["reason"]
    kept[ref] = (key, meta, text.replace(json.dumps(was), '"as kept"'))
    fragments.save(str(rows), kept, made_by)
    shown = json.loads(both(lead, ["board", "--all", "--json"], None)[0].out)
    assert [r["reason"] for r in shown["jobs"] if r["id"] == ref.rsplit("/", 1)[1]] == ["as kept"]
    assert "as kept" in both(lead, ["board", "--all"], None)[0].out
    # What makes the rows changed: each is made again, from the job's state.
    monkeypatch.setattr(kept_rows, "FORMAT", "another")
    # (through click's app: the front door's kept answer is stamped by the package's files, which this leaves as is)
    again = json.loads(both(lead, ["board", "--all", "--json"], None)[1].out)
    assert again == json.loads(first.out), "the rows made again are the rows first shown"
    # The job's ref moved: its row is made again, the others are read as kept.
    refs.append(repo, ref, "cost", "cost", {"cost_usd": 0.25})
    moved = json.loads(both(lead, ["board", "--all", "--json"], None)[0].out)
    [row] = [r for r in moved["jobs"] if r["id"] == ref.rsplit("/", 1)[1]]
    assert row["cost_usd"] == 0.25 and "landed in main" in row["reason"]
    held = fragments.load(str(rows), json.loads(rows.read_text().split("\n", 1)[0])["made_by"])
    assert held[ref][0].startswith(repo.read_ref(ref) or "-"), "kept by the ref's new tip"
    assert cache.read_all(repo, "jobs")[ref.rsplit("/", 1)[1]]["fields"]["cost_usd"] == 0.25


def test_a_kept_row_is_written_as_kept_unless_it_changed() -> None:
    """`laid_out`: a kept row's text, its handle put in, is what `ui.dumps` writes of the row; a row changed since
    it was kept (another clone's landing says so, a landing not yet recorded) is written from its fields."""
    row = {"id": "j1", "piece": "api", "reason": "landed in main as 1234567", "state": "landed", "checks": [],
           "dismissed": False, "updated": 1.5, "in_the_way": [{"path": "a.txt"}]}
    for change in ({"reason": "landed in main on another clone"}, {"state": "finished", "landed": "abc"}):
        r = kept_rows.KeptRow({**row, "_json": ui.dumps(row, 2)})
        r.text, r.changed = dict.pop(r, "_json"), False
        r["handle"] = "e1"
        data = {"jobs": [r], "now": [r], "lead": "main"}
        out = kept_rows.laid_out(data)
        assert type(out["jobs"]) is ui.Dumped and ui.dumps(out) == ui.dumps(data)
        assert r.text.replace('\n      "id"', '\n      "handle": "e1",\n      "id"', 1) in out["jobs"].text, "as kept"
        if len(change) == 1:
            r["reason"] = change["reason"]
        else:
            r.update(change)
        out = kept_rows.laid_out(data)
        field, value = next(iter(change.items()))
        assert f'"{field}": "{value}"' in out["jobs"].text and ui.dumps(out) == ui.dumps(data), "from its fields"
