"""A checkout's branch and one ref's id, read from git's own files with os alone, for the hooks that run on
every turn of an agent: what `git symbolic-ref HEAD` and `git rev-parse REF` would say where that is plain, and
None ("ask git", through Repo) wherever git's own judgement is needed (a symbolic ref, a link, another ref store,
a file that is not what git writes). Nothing here writes."""

from __future__ import annotations

import os
import stat

_HEX = frozenset("0123456789abcdef")
UNSURE = "?"  # ref_id's answer where only git can tell


def _object_id(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _read(path: str, errors: str = "strict") -> str:
    """The text of the plain file `path`, opened without waiting: a FIFO, a device or a folder planted where
    git keeps a file (in a worker's copy, say) raises OSError here, where reading it could block for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a plain file")
        with os.fdopen(fd, encoding="utf-8", errors=errors, closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def branch_of(git_dir: str) -> str | None:
    """The checked-out branch's short name from the checkout's HEAD file, or None where git must say (detached
    included: Repo.current_branch tells that apart)."""
    try:
        head = _read(f"{git_dir}/HEAD")
    except (OSError, UnicodeDecodeError):
        return None
    name = head[len("ref: refs/heads/"):].rstrip("\n") if head.startswith("ref: refs/heads/") else ""
    return name if name and name != ".invalid" and "\n" not in name else None


def ref_id(common_dir: str, ref: str) -> str | None:
    """The id `ref` (a full name under refs/) points at, read from its loose file or packed-refs; None when it
    is in neither; UNSURE where git should answer instead."""
    if not ref.startswith("refs/") or os.path.exists(f"{common_dir}/reftable"):
        return UNSURE
    path = f"{common_dir}/{ref}"
    try:
        if os.path.islink(path):
            return UNSURE
        text = _read(path).strip()
        return text if _object_id(text) else UNSURE
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return UNSURE
    try:
        lines = _read(f"{common_dir}/packed-refs", errors="replace").splitlines()
    except FileNotFoundError:
        return None
    except OSError:
        return UNSURE
    for line in lines:
        if not line or line.startswith(("#", "^")):
            continue
        sha, _, name = line.partition(" ")
        if not _object_id(sha) or not name.startswith("refs/"):
            return UNSURE
        if name == ref:
            return sha
    return None
