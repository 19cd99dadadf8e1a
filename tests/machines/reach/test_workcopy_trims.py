"""A local worker's copy set up and let go with few git processes (machines/reach/workcopy.py, shipped/reap.py,
shipped/worktrees.py): the same refs and folders as before, against real repositories."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.machines.reach import workcopy
from git_balanced.shipped import reap, worktrees
from tests.support.builders import git, make_repo


def test_a_fresh_copy_gets_the_base_and_the_branch_and_goes_without_git_once_its_worktree_is_gone(
        tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    copy = workcopy.ensure(repo, workcopy.WORKERS, "balanced/one", workcopy.carried_config(repo))
    listed = worktrees._worktree_list(str(copy))  # nothing registered yet: read from the files, as git says it
    assert listed == f"worktree {copy}\nbranch {git(copy, 'symbolic-ref', 'HEAD')}\n", listed
    workcopy.set_base(copy, "balanced/one", base, None)
    assert git(copy, "rev-parse", "refs/balanced/bases/balanced/one", "refs/heads/balanced/one").split() == [base] * 2
    wt = tmp_path / "wt" / "job1"
    runs = tmp_path / "runs"  # no run folder: no job of it holds the branch elsewhere
    worktrees._worktree(str(copy), str(wt), "balanced/one", base, str(runs), base)
    assert git(wt, "symbolic-ref", "--short", "HEAD") == "balanced/one"
    assert "balanced/one" in worktrees._worktree_list(str(copy)), "registered now: git is asked"
    # Set again for the same job started again: the branch its worktree holds is left as it is.
    (wt / "b.txt").write_text("b\n")
    git(wt, "add", "b.txt")
    git(wt, "commit", "-qm", "the job's own")
    own = git(wt, "rev-parse", "HEAD")
    workcopy.set_base(copy, "balanced/one", base, None)
    assert git(copy, "rev-parse", "refs/heads/balanced/one") == own
    answer = reap.cleanup({"job": "job1", "repo": str(copy), "worktree": str(wt), "runs_dir": str(runs),
                           "prune": False, "copy_goes": True, "grace": 0.1})
    assert answer["worktree_removed"] and not wt.exists(), answer
    workcopy.forget(repo, "balanced/one")
    assert not copy.exists(), "its only worktree's folder is gone: the copy goes, registration and all"
    assert git(lead, "rev-parse", "HEAD") == base


def test_a_copy_whose_worktree_folder_lives_is_kept(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    copy = workcopy.ensure(repo, workcopy.WORKERS, "balanced/two")
    workcopy.set_base(copy, "balanced/two", git(lead, "rev-parse", "HEAD"), None)
    git(copy, "worktree", "add", "-q", str(tmp_path / "wt"), "balanced/two")
    workcopy.forget(repo, "balanced/two")
    assert copy.is_dir(), "a worktree of it is there"


def test_a_branch_is_fetched_back_loose_or_packed_and_a_missing_one_is_none(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    copy = workcopy.ensure(repo, workcopy.WORKERS, "balanced/three")
    work = git(copy, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "the worker's")
    git(copy, "update-ref", "refs/heads/balanced/three", work)
    git(copy, "update-ref", "refs/heads/balanced/four", work)
    git(copy, "pack-refs", "--all")
    git(copy, "update-ref", "refs/heads/balanced/three", work)  # loose again, beside its packed line
    got = workcopy.fetch_branches(repo, copy, ["balanced/three", "balanced/four", "balanced/five"])
    assert got == {"balanced/three": "refs/heads/balanced/three", "balanced/four": "refs/heads/balanced/four",
                   "balanced/five": None}
    assert git(lead, "rev-parse", "balanced/three", "balanced/four").split() == [work, work]
