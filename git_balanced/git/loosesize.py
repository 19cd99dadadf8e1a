"""Objects' sizes read in-process from the header of their loose files (a few bytes inflated), where a worker's
branch brought back unpacked leaves its new blobs; `cat-file --batch-check` once for the rest, as before."""

from __future__ import annotations

import zlib
from pathlib import Path

from git_balanced.git.refs import OBJECT_ID
from git_balanced.git.repo import Repo

HEAD_MOST = 64  # bytes of an object's inflated start that hold its header (`blob 1234\0`)


def object_sizes(repo: Repo, ids: list[str]) -> list[int]:
    """The size in bytes of each object in `ids`, in order: loose ones from their own file, the others (packed,
    or not as git writes a loose one) from one `git cat-file --batch-check` for all of them."""
    objects = repo.common_dir / "objects"
    found = {oid: _loose_size(objects, oid) for oid in dict.fromkeys(ids)}
    rest = [oid for oid, size in found.items() if size is None]
    found.update(zip(rest, repo.object_sizes(rest), strict=True))
    return [int(found[oid] or 0) for oid in ids]


def _loose_size(objects: Path, oid: str) -> int | None:
    """The size a loose object's header says, or None where it is not a plain loose object of that id."""
    if not OBJECT_ID.fullmatch(oid):
        return None
    try:
        with open(objects / oid[:2] / oid[2:], "rb") as fh:
            data = fh.read(512)
        head = zlib.decompressobj().decompress(data, HEAD_MOST)
    except (OSError, zlib.error):
        return None
    kind, _, rest = head.partition(b" ")
    size, nul, _ = rest.partition(b"\0")
    if not nul or kind not in (b"blob", b"tree", b"commit", b"tag") or not size.isdigit():
        return None
    return int(size)
