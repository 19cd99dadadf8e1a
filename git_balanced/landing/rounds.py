"""The landing queue's checks: each round's prefixes of the chain on the check slots at once, and on the slots
left free, the next chain's top for each possible culprit (speculate.py), built and checked in the background
of the same round. Every check runs in its own scratch worktree of the checks' copy (checks.Scratch), fenced."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol

from git_balanced import proc
from git_balanced.git import Repo
from git_balanced.landing import checks, machine_checks, speculate
from git_balanced.landing.bisect import Search
from git_balanced.landing.starts import Starts
from git_balanced.machines.reach import workcopy


class PerThread:
    """A Repo of its own for each thread on one repository: a Repo's listing of refs and its batch of swaps are
    not thread-safe, so the landing's threads (preflights, checks, the next chains built ahead) never share one.
    Their objects they do share: every Repo on the repository reads through one locked store (git/objects.py),
    its packs mapped once."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._local = threading.local()
        self._local.repo = repo

    def get(self) -> Repo:
        """This thread's Repo (the one given, in the thread that made this)."""
        own: Repo | None = getattr(self._local, "repo", None)
        if own is None:
            r = self.repo
            own = Repo(r.root, r.git_dir, r.common_dir, r.bare)
            own.cleared = r.cleared  # the stale locks it removes are told as the given Repo's are
            self._local.repo = own
        return own


class Branch(Protocol):
    """What the checks need of a candidate (queue.Candidate)."""

    @property
    def tip(self) -> str: ...

    @property
    def label(self) -> str: ...


class Link(Protocol):
    """One merge of the chain (queue.Link): its commit and tree, and the branch it merged."""

    @property
    def commit(self) -> str: ...

    @property
    def tree(self) -> str: ...

    @property
    def cand(self) -> Branch: ...


@dataclass
class Checker:
    """Checks the chains of one landing run, counting what it spends."""

    repo: Repo
    check: str
    setup: str | None
    slots: int
    timeout: float | None = None  # `[worktree] check_timeout` of the settings the landing read (None: read them)
    seats: int | None = None  # this machine's check seats, read once for the landing (None: read at each check)
    runs: int = 0  # check runs, the speculative ones included
    rounds: int = 0
    ahead: int = 0  # of the runs, those of a next chain's top, checked before its round
    # The next chains built ahead, by the commit they are built on and their branches' tips: each merge's
    # commit and tree, for the queue to take rather than merge them all again (`built_on`).
    built: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = field(default_factory=dict)
    # The next chains being merged while a round's checks run, by the same key as `built`.
    merging: dict[tuple[str, tuple[str, ...]], Future[list[tuple[str, str]] | None]] = field(default_factory=dict)
    own: PerThread = field(init=False)  # the Repo of each thread the checks run in
    _mergers: ThreadPoolExecutor = field(init=False)
    # Every next chain merged ahead of its need, and what stops it when no round needs it any more.
    stops: dict[tuple[str, tuple[str, ...]], threading.Event] = field(default_factory=dict)
    # The idle machines whose checks steer the rounds, as hints (machine_checks.py); None: no machine is used.
    machines: machine_checks.Machines | None = None
    stopped: int = 0  # checks stopped once their round's top passed (_stop_others): not among `runs`
    _round_seconds: float = 0.0  # how long the last round's own checks took
    starts: Starts = field(default_factory=Starts)  # the order the current round's checks start in
    carried: dict[str, str] = field(init=False)  # the lead's config carried into the checks' copy

    def __post_init__(self) -> None:
        self.own = PerThread(self.repo)
        # read once a landing, not at each check's checkout
        self.carried = workcopy.carried_config(self.repo) if self.check else {}
        self._mergers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="land-merge")

    def _abandon(self, keep: set[tuple[str, tuple[str, ...]]]) -> None:
        """Stop merging the next chains not in `keep`: no round needs them now (one that does merges its own)."""
        for key in [k for k in self.merging if k not in keep]:
            merging = self.merging.pop(key)
            if not merging.cancel():
                self.stops[key].set()  # under way: it stops at its next merge

    def close(self) -> None:
        """Let the merging threads end (what they were merging is not waited for: it is only objects)."""
        self._mergers.shutdown(wait=False, cancel_futures=True)

    def search(self, tip: str, chain: Sequence[Link]) -> Search:
        """The longest passing prefix of `chain` (built on `tip`) and its first culprit; trees checked before
        (a note on the tree, a speculative check of an earlier round included) cost nothing."""
        known = {}
        for i, link in enumerate(chain, 1):
            hit = checks.for_landing(self.repo, link.tree, self.check)
            if hit is not None:
                known[i] = hit.passed

        def probe(idx: list[int], culprits: list[int]) -> dict[int, bool]:
            self.rounds += 1
            self.runs += len(idx)
            began = time.monotonic()
            top = max(idx)
            self.starts.begin(len(idx))  # the top's checkout first, then the others, then the merging (starts.py)
            pool = ThreadPoolExecutor(max_workers=len(idx) + len(culprits))
            early: dict[int, bool] | None = None
            try:
                # the top first, so its check takes the first slot and the first seat
                futs = {i: pool.submit(self._run, chain[i - 1].commit, f"land-{k}", i == top)
                        for k, i in sorted(enumerate(idx), key=lambda ki: ki[1] != top)}
                ahead = [pool.submit(self._ahead, tip, chain, c, f"land-{len(idx) + k}")
                         for k, c in enumerate(culprits)]
                if early := self._top_passed(futs, len(chain), ahead):
                    if self.machines is not None:  # the top's pass is the lead's own: a hint against it drops
                        self.machines.confirm(chain[-1].tree, True)
                    self._stop_others(futs, {i: f"land-{k}" for k, i in enumerate(idx)}, len(chain))
                    return early
                got = {i: f.result().passed for i, f in futs.items()}
                self._round_seconds = time.monotonic() - began
                spent = sum(1 for f in ahead if f.result())
            finally:
                pool.shutdown(wait=True)
            self.runs += spent
            self.ahead += spent
            if self.machines is not None:  # a machine whose hint the lead's own check contradicts is dropped
                for i, ok in got.items():
                    self.machines.confirm(chain[i - 1].tree, ok)
            return got

        def prepare(culprits: list[int]) -> None:
            self.starts = Starts()
            wanted = {self._key(tip, chain, c): c for c in culprits}
            self._abandon(set(wanted))
            for key, c in wanted.items():
                if key not in self.built and key not in self.merging:
                    stop = threading.Event()
                    self.merging[key] = self._mergers.submit(self._merge_after, tip, chain, c, stop)
                    self.stops[key] = stop

        s = speculate.search(len(chain), probe, self.slots, known=known, prepare=prepare,
                             guide=(lambda s, todo: self._guide(chain, s, todo)) if self.machines else None)
        # What the queue merges next, when a culprit was found, is kept; the other guesses are not needed.
        self._abandon({self._key(tip, chain, s.hi)} if s.hi < len(chain) and not s.passed.get(len(chain)) else set())
        return s

    def _guide(self, chain: Sequence[Link], s: Search, todo: list[int]) -> list[int]:
        """This round's prefixes, steered by what the idle machines said (machine_checks.picks), and the prefixes
        the free machines check meanwhile. Hints of a round under way are waited for a little first (half the
        last round, at least a second), so that a machine as fast as this one steers the next round; only when
        they can save a round (more prefixes are unknown than this round has slots), and only for those."""
        m = self.machines
        if m is None or len(chain) < 2:  # one branch: its one check is the lead's, with nothing to narrow
            return todo
        unknown = range(s.lo + 1, min(s.hi, s.n + 1))
        if s.passed and len(unknown) > self.slots:  # fewer: this round covers them all, a hint saves no round
            m.settle(max(1.0, self._round_seconds / 2), {chain[i - 1].tree for i in unknown})
        hints = m.hints(chain)
        steered = machine_checks.picks(s, hints, self.slots) or todo
        free = m.free()
        for i, machine in zip(machine_checks.spare(s, hints, steered, m.holding(chain), len(free)), free,
                              strict=False):
            m.send(self.own.get, machine, chain[i - 1])
        return steered

    def _run(self, commit: str, slot: str, top: bool = False) -> checks.CheckResult:
        return checks.check_rev(self.own.get(), commit, self.check, self.setup, scratch=slot, timeout=self.timeout,
                                seats=self.seats, turn=(self.starts, top), carried=self.carried)

    def _top_passed(self, futs: dict[int, Future[checks.CheckResult]], n: int,
                    ahead: list[Future[bool]]) -> dict[int, bool] | None:
        """{n: True} as soon as the chain's top, checked in this round, passed: the search ends there (every
        branch lands, as on one slot), so the round's other prefixes are not waited for (they are stopped, and
        record nothing: _stop_others) and no next chain is merged. None otherwise, or when checks ahead
        run in this round (their runs are counted when they end)."""
        if n not in futs or ahead or not futs[n].result().passed:
            return None
        self._abandon(set())
        return {n: True}

    def _stop_others(self, futs: dict[int, Future[checks.CheckResult]], slots: dict[int, str], top: int) -> None:
        """End the round's other checks, now that its top passed, and wait until they have: a stopped check
        records nothing and puts back what its code moved, which must come before the landing moves the branch
        (a check left running would judge that move, or a later one, as its code's)."""
        others = [slots[i] for i, f in futs.items() if i != top and not f.done()]
        if not others:
            return
        repo = self.own.get()
        marks = [checks.mark_of(repo, slot) for slot in others]
        proc.stop_marked(marks)
        try:
            rest = [f for i, f in futs.items() if i != top]
            wait(rest)
        finally:
            proc.go_on_marked(marks)
        # A stopped check recorded nothing: it is not counted among the runs (one that ended first is)
        stopped = sum(1 for f in rest if isinstance(f.exception(), proc.Stopped))
        self.runs -= stopped
        self.stopped += stopped

    def _ahead(self, tip: str, chain: Sequence[Link], culprit: int, slot: str) -> bool:
        """Check the chain that follows when branch `culprit` (1-based) is the one that fails: the branches
        after it merged onto prefix culprit - 1, as the queue will merge them. Whether a check ran (not
        when that tree was checked already, or a merge on the way conflicts: the queue sets that one aside,
        and the guess would not be what it checks)."""
        key = self._key(tip, chain, culprit)
        merging = self.merging.get(key)
        if merging is not None and merging.cancel():  # not begun yet (the mergers are busy): merged here instead
            self.merging.pop(key, None)
            merging = None
        merges = merging.result() if merging is not None else self._merge_after(tip, chain, culprit)
        if not merges or checks.for_landing(self.own.get(), merges[-1][1], self.check) is not None:
            return False
        self._run(merges[-1][0], slot)
        return True

    @staticmethod
    def _key(tip: str, chain: Sequence[Link], culprit: int) -> tuple[str, tuple[str, ...]]:
        """What the chain after `culprit` is kept by: the commit it is built on, and its branches' tips."""
        base = chain[culprit - 2].commit if culprit > 1 else tip
        return base, tuple(link.cand.tip for link in chain[culprit:])

    def _merge_after(self, tip: str, chain: Sequence[Link], culprit: int,
                     stop: threading.Event | None = None) -> list[tuple[str, str]] | None:
        """Merge the branches after `culprit` onto prefix culprit - 1, as the queue will if it is the culprit; each
        merge's commit and tree, kept in `built`. None when a merge on the way conflicts, or `stop` is set."""
        repo = self.own.get()
        key = self._key(tip, chain, culprit)
        if stop is not None and not self.starts.merged_may_start(stop):  # merged ahead: after the checkouts
            return None
        cur = key[0]
        merges: list[tuple[str, str]] = []
        for link in chain[culprit:]:
            if stop is not None and stop.is_set():
                return None
            m = repo.merge_tree(cur, link.cand.tip)
            if not m.clean:
                return None
            cur = repo.commit_tree(m.tree, [cur, link.cand.tip], link.cand.label)
            merges.append((cur, m.tree))
        self.built[key] = merges
        return merges

    def passed_after(self, base: str, tips: list[str]) -> list[tuple[str, str]]:
        """The merges (commit, tree) of the chain of `tips` built ahead on `base`, all of them, when the check
        passed on its top; else none."""
        built = self.built_on(base, tips)
        if len(built) != len(tips) or not built:
            return []
        res = checks.for_landing(self.repo, built[-1][1], self.check)
        return built if res is not None and res.passed else []

    def built_on(self, tip: str, tips: list[str]) -> list[tuple[str, str]]:
        """The merges (commit, tree) of the longest chain built ahead on `tip` whose branches begin `tips`."""
        for (base, ahead), merging in list(self.merging.items()):  # one being merged now is waited for
            if base == tip and tuple(tips[:len(ahead)]) == ahead and not merging.cancelled():
                merging.result()
        found: list[tuple[str, str]] = []
        for (base, ahead), merges in list(self.built.items()):
            if base == tip and len(ahead) > len(found) and tuple(tips[:len(ahead)]) == ahead:
                found = merges
        return found
