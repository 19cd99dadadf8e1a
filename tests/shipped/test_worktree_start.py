"""Where a worker's new worktree starts (shipped/worktrees.py): at the lead's record, whatever the copy held, and
without an `update-ref` when the copy's branch is there already (the lead set it in a copy of this machine's)."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced.shipped.worktrees import _branch_at, _worktree
from tests.support.builders import commit, git, make_repo

BRANCH = "balanced/piece"


def test_a_new_worktree_starts_at_the_leads_record_planted_or_already_there(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "copy", {"a.txt": "a\n"})
    base = git(repo, "rev-parse", "HEAD")
    planted = commit(repo, {"a.txt": "planted\n"}, "a worker's plant")
    git(repo, "update-ref", f"refs/heads/{BRANCH}", planted)
    assert _branch_at(str(repo), BRANCH) == planted
    _worktree(str(repo), str(tmp_path / "wt1"), BRANCH, base, None, base)
    assert git(tmp_path / "wt1", "rev-parse", "HEAD") == base, "set from the lead's record, not the plant"
    git(repo, "worktree", "remove", "--force", str(tmp_path / "wt1"))
    assert _branch_at(str(repo), BRANCH) == base
    _worktree(str(repo), str(tmp_path / "wt2"), BRANCH, base, None, base)  # already there: no update-ref needed
    assert git(tmp_path / "wt2", "rev-parse", "HEAD") == base
    git(repo, "worktree", "remove", "--force", str(tmp_path / "wt2"))
    git(repo, "pack-refs", "--all")
    assert _branch_at(str(repo), BRANCH) is None, "packed: git says"
    git(repo, "update-ref", f"refs/heads/{BRANCH}", planted)
    os.replace(repo / ".git" / "refs" / "heads" / "balanced" / "piece", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", repo / ".git" / "refs" / "heads" / "balanced" / "piece")
    assert _branch_at(str(repo), BRANCH) is None, "a link is not read"
    (repo / ".git" / "refs" / "heads" / "balanced" / "piece").unlink()
    assert _branch_at(str(repo), "balanced/none") is None


def test_the_seats_sent_are_this_packages_imported_or_else_compiled_as_sent() -> None:
    """On the lead's machine the runner runs from the package: seats.py as the engine sends it is that module,
    imported once, not compiled again for each worker; any other text is compiled as it came."""
    from git_balanced.machines.placing import check_seats
    from git_balanced.shipped import launch, seats

    mine = launch.seats_module(check_seats.source())
    assert mine is not None and mine["seat_budget"] is seats.seat_budget
    other = launch.seats_module(check_seats.source() + "\nSENT_ALONE = 1\n")
    assert other is not None and other["SENT_ALONE"] == 1 and other["seat_budget"] is not seats.seat_budget
    assert other["seat_budget"]("3") == mine["seat_budget"]("3") == 3
