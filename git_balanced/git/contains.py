"""Which of some refs hold a commit, in one git process (`for-each-ref --contains`), where asking
`merge-base --is-ancestor` of each ref took one each."""

from __future__ import annotations

from collections.abc import Collection

from git_balanced.git.core import RepoCore


def holding(repo: RepoCore, commit: str, refs: Collection[str]) -> set[str]:
    """Those of `refs` (full names) that point at `commit` or a commit on top of it (a tag peeled to its
    commit); a ref gone meanwhile, or one that names no commit, is not among them."""
    if not refs:
        return set()
    # Each full name is a pattern matching that ref alone (a ref's name holds none of `*?[`).
    res = repo._run("for-each-ref", f"--contains={commit}", "--format=%(refname)", *sorted(refs))
    return set(res.out.split()) & set(refs) if res.ok else set()
