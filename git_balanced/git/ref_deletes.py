"""Many refs removed in one transaction (`git update-ref --stdin`): all of them, or none."""

from __future__ import annotations

from collections.abc import Mapping

from git_balanced.git.repo import Repo


def delete_refs(repo: Repo, refs: Mapping[str, str]) -> bool:
    """Remove every ref of `refs` ({ref: the id it must still point at}) at once, packed-refs rewritten once;
    False, with nothing removed, when any of them moved (or git could not)."""
    if not refs:
        return True
    lines = "".join(f"delete {ref} {old}\n" for ref, old in refs.items())
    return repo._run("update-ref", "--stdin", input=lines).ok
