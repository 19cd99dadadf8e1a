"""Which of some refs hold a commit, in one git process (`for-each-ref --contains`), where asking
`merge-base --is-ancestor` of each ref took one each."""

from __future__ import annotations

from collections.abc import Collection

from git_balanced.git.core import RepoCore


def holding(repo: RepoCore, commit: str, refs: Collection[str]) -> set[str] | None:
    """Those of `refs` (full names, under refs/heads/ or refs/tags/) that point at `commit` or a commit on top of
    it (a tag peeled to its commit); a ref gone meanwhile, or one that names no commit, is not among them. None
    where git could not answer: the caller asks of each ref then. The refs are listed by their prefixes, not
    named: the checked code may have made more of them than one command line holds."""
    if not refs:
        return set()
    prefixes = sorted({"refs/tags/" if r.startswith("refs/tags/") else "refs/heads/" for r in refs})
    res = repo._run("for-each-ref", f"--contains={commit}", "--format=%(refname)", *prefixes)
    return set(res.out.split()) & set(refs) if res.ok else None
