"""The idle machines' landing hints (refs/notes/hints/balanced-machine-checks) are kept a week, for the newest
trees, in one commit of no parent: they grow with what is live, not with every landing ever. Real notes in a real
repository; the engine's idle look prunes them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from git_balanced.engine.upkeep import Upkeep
from git_balanced.git import Repo
from git_balanced.landing import machine_checks
from git_balanced.landing.machine_checks import HINTS, Hint
from git_balanced.lead import Lead
from git_balanced.state import notes
from tests.support.builders import git, make_repo


def hint(repo: Repo, k: int, at: float) -> str:
    """A hint on a tree of its own, given at `at`; the tree's id."""
    tree = repo.write_tree([("f", notes.MODE_FILE, repo.write_blob(f"tree {k}\n".encode()))])
    notes.add_json(repo, HINTS, tree, Hint("alpha", tree, "c" * 40, k % 2 == 0, 0, "", 1.0, at).record())
    return tree


def test_hints_older_than_a_week_or_beyond_the_newest_go_with_their_history(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    now = time.time()
    old = [hint(repo, k, now - 8 * 86400) for k in range(3)]
    new = [hint(repo, k, now - 100 + k) for k in range(3, 7)]
    assert machine_checks.prune_hints(repo, now=now, most=3) == 4, "3 a week old, and the oldest of the new"
    tip = repo.read_ref(HINTS)
    assert tip and git(path, "rev-list", "--count", tip) == "1", "one commit of no parent"
    assert sorted(notes.all_notes(repo, tip)) == sorted(new[1:])
    assert all(notes.read_json(repo, HINTS, t) == [] for t in old + new[:1])
    record = notes.read_json(repo, HINTS, new[-1])
    assert record and record[0]["machine"] == "alpha" and record[0]["hint"] is True, "kept as written"
    assert git(path, "notes", "--ref=hints/balanced-machine-checks", "list").count("\n") == 2, "git reads them"
    assert machine_checks.prune_hints(repo, now=now, most=3) == 0 and repo.read_ref(HINTS) == tip, "nothing to do"
    assert machine_checks.prune_hints(repo, now=now + 30 * 86400) == 3 and repo.read_ref(HINTS) is None


def test_the_idle_engine_prunes_them(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    hint(repo, 0, time.time() - 30 * 86400)
    kept = hint(repo, 1, time.time())
    Upkeep(Lead(repo, "main")).idle(now=0.0)
    tip = repo.read_ref(HINTS)
    assert tip and list(notes.all_notes(repo, tip)) == [kept] and not notes.has_history(repo, tip)


def test_hints_that_cannot_be_read_leave_the_engine_going(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    assert repo.cas_ref(HINTS, repo.write_commit("1" * 40, [], "a tree that is not there\n"), None)
    Upkeep(Lead(repo, "main")).idle(now=0.0)
    said = capsys.readouterr().err
    assert "could not be pruned" in said and f"git update-ref -d {HINTS}" in said


def test_a_hint_whose_time_is_not_a_number_is_old_and_goes(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    kept = hint(repo, 0, time.time())
    junk = [repo.write_tree([("f", notes.MODE_FILE, repo.write_blob(f"junk {k}\n".encode()))]) for k in range(3)]
    for tree, line in zip(junk, ('{"at": "yesterday"}', '{"at": null}', '{"at": [1]}'), strict=True):
        git(path, "notes", "--ref=refs/notes/hints/balanced-machine-checks", "add", "-m", line, tree)
    assert machine_checks.prune_hints(repo) == 3
    tip = repo.read_ref(HINTS)
    assert tip and list(notes.all_notes(repo, tip)) == [kept]
