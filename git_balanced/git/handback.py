"""A worker's branch brought back from its own copy on this machine in two git processes, where `git fetch` started
six (itself, a shell, upload-pack, pack-objects, unpack-objects and the walk that checks what came is whole).

`pack-objects` runs in the copy as every git command there runs (run.py, untrusted.py: nothing the copy names
runs), and packs what the branch has past the commits named; `unpack-objects --strict` (`index-pack --strict`
for a larger pack, as a fetch keeps one) writes it here, checking each object, and that every object they name is
in the pack or here already: what the fetch's walk made sure of. Then one `update-ref --stdin` moves every
branch of the call. Anything unusual (a ref git should read, a link or a large object folder in the copy, a
pack or a ref git refuses) returns None, and the caller fetches that branch as before.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced.git.core import RepoCore
from git_balanced.git.peek import UNSURE, ref_id
from git_balanced.git.run import run_git

OWN_MOST = 16 << 20  # bytes of a copy's own objects brought back through memory; a copy holding more is fetched
UNPACK_MOST = 100  # objects unpacked loose, as a fetch does below git's fetch.unpackLimit; from there a pack


def carry(repo: RepoCore, copy: Path, branch: str, known: list[str]) -> str | None:
    """Bring the objects of `branch` in the worker copy `copy` here, past the commits `known` (which this
    repository has); the branch's tip, or None when the caller should fetch it instead. Moves no ref."""
    git_dir = copy / ".git"
    tip = ref_id(str(git_dir), f"refs/heads/{branch}")
    if tip is None or tip == UNSURE or not _small(git_dir / "objects"):
        return None
    revs = "".join(f"^{k}\n" for k in known if k and k != UNSURE)
    # --missing=allow-any: an object the copy lacks is left out, never fetched from a "promisor" remote its config
    # names (which would run that remote's upload-pack command here); --strict below then refuses the pack.
    packed = run_git(["pack-objects", "--revs", "--stdout", "-q", "--missing=allow-any"], cwd=copy,
                     input=f"{tip}\n{revs}".encode(), text=False)
    pack = packed.out if isinstance(packed.out, bytes) else b""
    if packed.code != 0 or len(pack) < 12 or pack[:4] != b"PACK":
        return None
    count = int.from_bytes(pack[8:12], "big")
    if count:
        args = ["unpack-objects", "-q", "--strict"] if count < UNPACK_MOST else ["index-pack", "--stdin", "--strict"]
        if not run_git(args, cwd=repo.root, input=pack, text=False).ok:
            return None
    return tip


def set_branches(repo: RepoCore, tips: dict[str, str]) -> bool:
    """Point each `refs/heads/<branch>` of `tips` at its tip in one transaction, as a forced fetch would; False,
    with none moved, when git refuses any (a tip it lacks, or that is not a commit)."""
    if not tips:
        return True
    lines = "".join(f"update refs/heads/{b} {tip}\n" for b, tip in tips.items())
    return repo._run("update-ref", "-m", "fetch: back from the worker copy", "--stdin", input=lines).ok


def _small(objects: Path) -> bool:
    """Whether the copy's own object folder holds plain files and folders only, under OWN_MOST bytes in all."""
    total, folders = 0, [str(objects)]
    try:
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                    else:
                        return False
                    if total > OWN_MOST:
                        return False
    except OSError:
        return False
    return True
