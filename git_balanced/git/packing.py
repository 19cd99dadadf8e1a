"""Packing a repository's refs and objects ourselves, as git's automatic maintenance would (which our git
commands turn off, run.NO_AUTO_MAINTENANCE): how much lies loose, and the two bounded commands that pack it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from git_balanced.git.core import RepoCore

TIMED_OUT = 124  # proc.run's code for a process it ended at its timeout


@dataclass(frozen=True)
class Loose:
    """What lies unpacked in a repository: loose refs, loose objects, and how many packs there are."""

    refs: int
    objects: int
    packs: int


def loose(repo: RepoCore) -> Loose:
    """The loose refs (files under `refs/`, counted in-process) and the loose objects and packs (`git
    count-objects -v`) of `repo`."""
    res = repo._run("count-objects", "-v")
    counts = dict(line.split(": ", 1) for line in res.out.splitlines() if ": " in line) if res.ok else {}
    return Loose(refs=_loose_refs(str(repo.common_dir / "refs")), objects=int(counts.get("count", "0")),
                 packs=int(counts.get("packs", "0")))


def _loose_refs(top: str) -> int:
    """How many ref files lie under the folder `top` (a writer's `.lock` left out)."""
    count, folders = 0, [top]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif not entry.name.endswith(".lock"):
                        count += 1
        except (FileNotFoundError, NotADirectoryError):
            continue
    return count


def pack_refs(repo: RepoCore, timeout: float) -> bool:
    """Move every loose ref into packed-refs (`git pack-refs --all --prune`); git takes each ref's lock before
    it removes the loose file, so a writer holding one keeps its ref loose. True when git finished in time;
    when it was ended, what it left is removed (left_behind)."""
    start = time.time()
    res = repo._run("pack-refs", "--all", "--prune", timeout=timeout)
    if res.code == TIMED_OUT:  # ended by us: what it held is ours to remove (a git that failed, say on another
        left_behind(repo, start)  # writer's packed-refs.lock, leaves nothing, and that lock is not ours)
    return res.ok


def pack_objects(repo: RepoCore, timeout: float) -> bool:
    """Put the loose objects and the small packs into one new pack (`git repack -d -l --geometric=2`: the
    large packs are left as they are, so the work grows with what came since, not with the history). True when
    git finished in time; when it was ended, its half-written pack is removed (left_behind)."""
    start = time.time()
    res = repo._run("repack", "-d", "-l", "-q", "--geometric=2", timeout=timeout)
    if res.code == TIMED_OUT:  # ended by us: what it held is ours to remove (a git that failed, say on another
        left_behind(repo, start)  # writer's packed-refs.lock, leaves nothing, and that lock is not ours)
    return res.ok


def write_graph(repo: RepoCore, timeout: float) -> bool:
    """Write the commit-graph of what the refs reach (`git commit-graph write --reachable --split`: a layer of the
    commits new since the last, merged with the ones below as they grow). A `git fetch` into the lead reads every
    ref's commit twice (what it has, then what came against all of them): from the graph, not from the packs.
    True when git finished in time; when it was ended, what it left is removed (left_behind)."""
    start = time.time()
    res = repo._run("commit-graph", "write", "--reachable", "--split", "--no-progress", timeout=timeout)
    if res.code == TIMED_OUT:
        left_behind(repo, start)
    return res.ok


def left_behind(repo: RepoCore, since: float) -> list[str]:
    """Remove what a packing git ended at its timeout (a SIGKILL: no handler of its own runs) left since
    `since`: packed-refs' lock, which would keep every later packing and ref removal out, and the new packed-refs
    it was writing under that lock (`packed-refs.new`, which every later packing would refuse to write over), its
    temporary pack
    and commit-graph files, and the graph chain's lock. A ref's own lock it held is removed once stale, as any
    (locks.py). The removed paths."""
    found = [repo.common_dir / "packed-refs.lock", repo.common_dir / "packed-refs.new"]
    pack_dir = repo.common_dir / "objects" / "pack"
    found += [p for p in pack_dir.glob("*") if p.name.startswith(("tmp_", ".tmp-"))]
    graphs = repo.common_dir / "objects" / "info" / "commit-graphs"
    found += [graphs / "commit-graph-chain.lock", *(p for p in graphs.glob("tmp_*"))]
    removed = []
    for path in found:
        try:
            if path.stat().st_mtime >= since - 1:  # the file system's clock may round down
                path.unlink()
                removed.append(str(path))
        except FileNotFoundError:
            continue
    return removed
