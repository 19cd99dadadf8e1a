"""Refs written into a repository git has just made and nothing else has seen yet (a worker copy before it takes
its place), where an `update-ref` would start a process for it: a branch as a loose file with its reflog line, the
way git writes one; any other ref in the new repository's packed-refs, one file for all of them."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git.refs import OBJECT_ID, PackedRefs, write_loose

# What git writes atop a packed-refs file, less "peeled": a reader of this one peels a ref itself if it must.
PACKED_HEADER = "# pack-refs with: sorted \n"


def write_refs(git_dir: Path, refs: dict[str, str], who: str, message: str) -> bool:
    """Set each ref of `refs` ({full name: id}) in the new repository `git_dir`; False, having written nothing,
    where git keeps its refs otherwise (reftable) or an id is not a full one: then the caller asks git.

    A branch (`refs/heads/`) is written loose with a line in its reflog, as git writes one. The others (a job's
    base, under `refs/balanced/`) go in packed-refs, written whole while no packed-refs is there: git keeps no
    reflog of such a ref in a repository that is not bare (`core.logAllRefUpdates` true), and a loose one costs
    its folders, a lock and a reflog's folders and file, some eight files made for each worker and removed again
    with its copy."""
    if (git_dir / "reftable").exists() or not (git_dir / "refs").is_dir() or \
            not all(OBJECT_ID.fullmatch(v) and k.startswith("refs/") for k, v in refs.items()):
        return False
    packed_path = git_dir / "packed-refs"
    others = {ref: new for ref, new in refs.items() if not ref.startswith("refs/heads/")}
    loose = {ref: new for ref, new in refs.items() if ref not in others or packed_path.exists()}
    if others and not packed_path.exists():
        # Nothing else sees this repository before it takes its place: written in place, not through a lock.
        packed_path.write_text(PACKED_HEADER + "".join(f"{others[ref]} {ref}\n" for ref in sorted(others)),
                               encoding="utf-8")
    packed = PackedRefs(packed_path)
    for ref, new in loose.items():
        if write_loose(git_dir, ref, new, None, packed, who=who, message=message, fsync=False) is not True:
            return False
    return True
