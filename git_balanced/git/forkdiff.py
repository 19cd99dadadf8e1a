"""What a branch changes since it forked from another, in one git process: `git diff-tree --merge-base` finds the
merge base and diffs from it, where `merge-base` then `diff-tree` took two (the landing's preflight, per branch)."""

from __future__ import annotations

from git_balanced.git.core import RepoCore
from git_balanced.git.repo import TreeChange, tree_changes


def since_fork(repo: RepoCore, ours: str, theirs: str) -> list[TreeChange] | None:
    """The files commit `theirs` changes since its merge base with `ours`, each with its blobs on both sides;
    None when git cannot say in one step (no merge base, or several): the caller asks `merge-base` then."""
    res = repo._run("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--merge-base", ours, theirs)
    if res.code != 0:
        return None
    return tree_changes(res.out)
