"""What a process keeps of its own checks (landing/checks.Ours) is what its running checks need, not its history."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import process
from git_balanced.git import Repo
from git_balanced.landing import checks
from tests.support.builders import commit, make_repo


def test_a_check_that_ends_leaves_only_its_result(tmp_path: Path) -> None:
    """Two real checks, one after the other: the notes they wrote and the landing's move are dropped as each
    ends (no check is left to need them); each result is kept for a landing without a fence."""
    path = make_repo(tmp_path / "r", {"ok.txt": "fine\n"})
    repo = Repo.discover(path)
    ours = process.part(checks.Ours)
    checks.landing_moves(repo, "refs/heads/main", repo.rev_parse("HEAD") or "")
    first = checks.check_rev(repo, "HEAD", "test -f ok.txt", None, use_cache=False, timeout=60, seats=1)
    commit(path, {"two.txt": "2\n"}, "two")
    second = checks.check_rev(repo, "HEAD", "test -f ok.txt", None, use_cache=False, timeout=60, seats=1)
    assert first.passed and second.passed and first.tree != second.tree
    assert ours.running == {} and ours.written == {} and ours.written_at == {}
    assert len(ours.moves) == 1, "a move said within MOVE_GRACE is kept: its ref may not have moved yet"
    ours.end(ours.begin(), now=ours.moves[next(iter(ours.moves))] + checks.MOVE_GRACE + 1)
    assert ours.moves == {}, "and dropped once a check ends past it"
    assert {k[1] for k in ours.ran} == {first.tree, second.tree}


def test_what_a_running_check_needs_stays_until_it_ends() -> None:
    """A result written and a move made while an older check runs are kept until that check ends, whatever
    checks begun later end meanwhile."""
    ours = checks.Ours()
    older = ours.begin()
    t0 = ours.running[older]
    ours.moves[("r", "refs/heads/main", "c1")] = t0 + 1
    ours.written["n1"] = ("tree", {})
    ours.written_at["n1"] = t0 + 1
    later = ours.begin()
    ours.end(later, now=t0 + 1000)
    assert "n1" in ours.written and ("r", "refs/heads/main", "c1") in ours.moves
    ours.end(older, now=t0 + 1000)
    assert ours.written == {} and ours.moves == {} and ours.running == {}


def test_results_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "RAN_KEPT", 3)
    ours = checks.Ours()
    for i in range(10):
        ours.keep_ran(("r", f"t{i}", "h"), checks.CheckResult(f"t{i}", "true", True, 0, 0.1, "", 0.0))
    ours.keep_ran(("r", "t7", "h"), checks.CheckResult("t7", "true", True, 0, 0.1, "", 1.0))
    assert [k[1] for k in ours.ran] == ["t8", "t9", "t7"], "the newest three, the one kept again last"
