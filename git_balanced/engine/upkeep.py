"""The engine's one idle hook: between passes when nothing is due, it folds what was done long ago into the
archive (state/archive.when_idle), keeps the idle machines' landing hints of the last week only
(landing/machine_checks.prune_hints), and packs the lead's repository: git's automatic maintenance is off in every
git command of ours (git/run.py), so the loose refs and objects the passes write are packed here, bounded in
time, and said in one line on stderr (the engine's log)."""

from __future__ import annotations

import sys
import time

from git_balanced.errors import BalancedError
from git_balanced.files import Flock
from git_balanced.git import Repo
from git_balanced.lead import Lead

LOOSE_REFS = 500  # loose refs above which they are packed (every listing of them opens each file)
LOOSE_OBJECTS = 2000  # loose objects above which they are packed (git's own gc.auto is 6,700)
PACKS = 20  # packs above which the small ones are packed together (git's gc.autoPackLimit is 50)
# The most each git command may take (the engine does nothing else meanwhile); it is ended then (what it left is
# removed), and the next idle look tries again. A pack-refs ended half way has packed them all and removed some
# loose ones, so each try gets further. 20,000 loose refs took 60 to 90 s on 2 busy cores
# (bench/maintenance.py); a few hundred, what passes leave between two idle looks, well under a second.
SECONDS = 120.0
EVERY = 300.0  # seconds between two looks while the engine stays idle


class Upkeep:
    """When the engine last looked, and whether the archive's fold left plans for the next look."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.repo = lead.repo
        self.looked = float("-inf")  # time.monotonic() of the last look
        self.left = False  # the last fold left plans: the next idle look folds more, without waiting EVERY

    def idle(self, *, now: float | None = None) -> str | None:
        """Fold what was done long ago (archive.when_idle, its own throttle), prune the machines' hints, then pack
        what lies loose beyond the limits, at most once every EVERY seconds (sooner while the fold left plans);
        the packing's line said, or None when nothing was packed."""
        now = time.monotonic() if now is None else now
        if now - self.looked < EVERY and not self.left:
            return None
        from git_balanced.landing import machine_checks  # here: an engine that never idles never needs them
        from git_balanced.state import archive

        self.looked = now
        self.left = archive.when_idle(self.lead)
        try:
            machine_checks.prune_hints(self.repo)
        except (KeyError, OSError, BalancedError) as exc:  # a hint's object gone: the engine goes on, and says so
            print(f"[balanced] The machines' landing hints ({machine_checks.HINTS}) could not be pruned: {exc}; "
                  f"`git update-ref -d {machine_checks.HINTS}` drops them all (no landing reads them).",
                  file=sys.stderr, flush=True)
        line = pack_if_loose(self.repo)
        if line:
            print(f"[balanced] {line}", file=sys.stderr, flush=True)
        return line


def pack_if_loose(repo: Repo, *, refs: int = LOOSE_REFS, objects: int = LOOSE_OBJECTS, packs: int = PACKS,
                  seconds: float = SECONDS) -> str | None:
    """Pack the refs when more than `refs` lie loose, and the objects when more than `objects` do or there are
    more than `packs` packs, each git command ended after `seconds`; what was packed and how long it took, or
    None when nothing was due, or a landing holds the landing lock (it moves refs: the next look packs)."""
    from git_balanced.git import packing

    found = packing.loose(repo)
    do_refs = found.refs > refs
    do_objects = found.objects > objects or found.packs > packs
    if not (do_refs or do_objects):
        return None
    lock = Flock(repo.state_dir / "landing.lock")
    if not lock.take(wait=False):
        return None
    try:
        start = time.monotonic()
        said = []
        if do_refs:
            ok = packing.pack_refs(repo, seconds)
            said.append(f"{found.refs:,} loose refs into packed-refs" + ("" if ok else " (git did not finish)"))
        if do_objects:
            ok = packing.pack_objects(repo, seconds)
            packs_too = f" and {found.packs} small packs" if found.packs > packs else ""
            said.append(f"{found.objects:,} loose objects{packs_too} into a pack" + ("" if ok else
                                                                                 " (git did not finish)"))
        # A fetch into the lead reads every ref's commit: from the commit-graph, not the packs (bench/scale.py).
        graph = "" if packing.write_graph(repo, seconds) else " (git did not finish)"
        spent = time.monotonic() - start
    finally:
        lock.release()
    return f"Packed while idle: {' and '.join(said)}, in {spent:.2f} s; the commit-graph written{graph}."
