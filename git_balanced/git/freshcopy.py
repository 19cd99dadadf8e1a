"""Refs written into a repository git has just made and nothing else has seen yet (a worker copy before it takes
its place), as loose files the way git writes them, where an `update-ref` would start a process for it."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git.refs import OBJECT_ID, PackedRefs, write_loose


def write_refs(git_dir: Path, refs: dict[str, str], who: str, message: str) -> bool:
    """Set each ref of `refs` ({full name: id}) in the new repository `git_dir`, with a reflog line each; False,
    having written nothing, where git keeps its refs otherwise (reftable) or an id is not a full one: then the
    caller asks git."""
    if (git_dir / "reftable").exists() or not (git_dir / "refs").is_dir() or \
            not all(OBJECT_ID.fullmatch(v) and k.startswith("refs/") for k, v in refs.items()):
        return False
    packed = PackedRefs(git_dir / "packed-refs")
    for ref, new in refs.items():
        if write_loose(git_dir, ref, new, None, packed, who=who, message=message, fsync=False) is not True:
            return False
    return True
