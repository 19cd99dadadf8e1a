"""Which of some refs hold a commit, in one git process (`for-each-ref --contains`), where asking
`merge-base --is-ancestor` of each ref took one each; which are merged into one (`for-each-ref --merged`); which
branches a checkout of the repository holds."""

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


def merged(repo: RepoCore, commit: str, prefixes: Collection[str]) -> dict[str, str] | None:
    """The refs under `prefixes` that point at `commit` or at a commit it holds (an ancestor: merged into it),
    each with the id it points at, in one git process (`for-each-ref --merged`); None where git could not answer."""
    if not prefixes:
        return {}
    res = repo._run("for-each-ref", f"--merged={commit}", "--format=%(objectname) %(refname)", *sorted(prefixes))
    if not res.ok:
        return None
    return {ref: sha for sha, _, ref in (line.partition(" ") for line in res.out.splitlines()) if ref}


# What names a branch as taken in a checkout's git folder: its HEAD, and a rebase under way there (HEAD detached).
_HELD_IN = ("HEAD", "rebase-merge/head-name", "rebase-apply/head-name")


def checked_out(repo: RepoCore) -> set[str] | None:
    """The branches (full names) that a checkout of this repository has checked out, or is rebasing: its own
    folder's and each linked worktree's files, read here (as `git branch -d` refuses them); None when one of them
    cannot be read, so that the caller takes every branch as held."""
    held: set[str] = set()
    folders = [repo.common_dir, *sorted((repo.common_dir / "worktrees").glob("*/"))]
    for folder in folders:
        for name in _HELD_IN:
            try:
                text = (folder / name).read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError):
                return None
            ref = text.removeprefix("ref: ")
            if ref.startswith("refs/heads/"):
                held.add(ref)
    return held
