"""Landing checks on idle ticked machines: hints that choose what the lead's own check slots check.

A machine that is ticked, ready for this repository, answers, and runs no worker can take landing checks while
a round of the search runs (rounds.py): the lead pushes the candidate merge into the machine's copy, the way it
pushes a worker's base (`refs/balanced/landing-checks/<branch>` there), and the runner runs the lead's committed
check on exactly that commit's tree in a fenced scratch repository of its own (shipped/landcheck.py), then removes
that ref: a machine's copy keeps no candidate once its check ended.

A machine's copy is one a worker may have written, so its answer is a HINT, never a verdict. Hints only choose
which prefixes the lead checks next (`view`, `picks`): the prefix they say is the longest passing one and the one
after it, so that a right hint ends the search in one more round. The search's results, the tree the lead's
branch moves to and the branch refused are the lead's own checks alone, as without machines. A machine whose
hint the lead's own check of the same tree contradicts is dropped for the rest of the landing; so is one that
does not answer. Hints are kept apart from the lead's results, in HINTS, which no landing reads.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from git_balanced.errors import BalancedError
from git_balanced.files import json_objects
from git_balanced.git import Repo
from git_balanced.landing.bisect import Search, next_probes
from git_balanced.lead import Lead
from git_balanced.state import notes

HINTS = "refs/notes/hints/balanced-machine-checks"  # never read for landing; outside what `sync` carries
HINT_DAYS = 7.0  # the hints on a tree are kept this long after the last of them (prune_hints, when the engine idles)
HINTS_KEPT = 500  # and for at most this many trees, the newest
LANDING_REFS = "refs/balanced/landing-checks/"  # where a candidate is pushed in a machine's copy
PUSH_TIMEOUT = 120.0


class Tree(Protocol):
    @property
    def commit(self) -> str: ...

    @property
    def tree(self) -> str: ...


@dataclass(frozen=True)
class Hint:
    """What one machine said of one tree."""

    machine: str
    tree: str
    commit: str
    passed: bool
    code: int
    tail: str
    seconds: float
    at: float

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "result": "pass" if self.passed else "fail", "hint": True}


def idle(lead: Lead) -> list[str]:
    """The machines that may take landing checks now: ticked, ready for this repository's own copy, not a box,
    not skipped as unreachable lately, not manual-only, and running no worker of this repository."""
    from git_balanced.machines.inventory import records
    from git_balanced.machines.placing.seats import seats
    from git_balanced.machines.reach import copies

    repo = lead.repo
    ready = records.readiness(repo)
    ids = {name for name, r in ready.items() if r.get("ready") and name in records.ticked(repo)}
    ids = {n for n in ids if n != records.LOCAL and records.box_of(n) is None}
    if not ids:
        return []
    own = copies.identity(repo).id
    return [s.name for s in seats(lead) if s.name in ids and s.reachable and s.ready and s.ticked
            and s.running == 0 and s.preference != "manual-only" and ready[s.name].get("repository") == own]


def view(s: Search, hints: dict[int, bool]) -> Search:
    """The search as the hints would have it: the lead's own results, and the hints between the prefix known to
    pass and the one known to fail."""
    return Search(s.n, {**{i: ok for i, ok in hints.items() if s.lo < i < s.hi}, **s.passed})


def picks(s: Search, hints: dict[int, bool], slots: int) -> list[int]:
    """The prefixes the lead checks this round, steered by the hints: when they settle the search, the prefix
    they say passes longest and the one after it (the culprit's); else the round the search would run on their
    view. Only prefixes the lead has not checked; none when the hints add nothing."""
    v = view(s, hints)
    if v.passed == s.passed:
        return []
    if v.done():
        want = [s.n] if v.passed.get(s.n) else [v.lo, v.hi]
    else:
        want = next_probes(v, slots)
    return sorted({i for i in want if 0 < i <= s.n and i not in s.passed})[:max(1, slots)]


def spare(s: Search, hints: dict[int, bool], taken: Sequence[int], busy: set[int], count: int) -> list[int]:
    """Up to `count` prefixes for the machines to check this round, between the prefixes the hints' view says
    pass and fail: each the middle of the widest gap left between those and the prefixes the lead checks or a
    machine holds, the earliest first among equals (the search is after the first failure)."""
    v = view(s, hints)
    lo, hi = v.lo, min(v.hi, s.n + 1)
    points = {lo, hi, *(i for i in (*taken, *busy) if lo < i < hi)}
    out: list[int] = []
    while len(out) < count:
        edges = sorted(points)
        gaps = [(b - a, -a, a, b) for a, b in zip(edges, edges[1:], strict=False) if b - a > 1]
        if not gaps:
            break
        _, _, a, b = max(gaps)
        out.append((a + b) // 2)
        points.add(out[-1])
    return sorted(out)


@dataclass
class Machines:
    """The idle machines of one landing run, and the hints they gave. Their checks run in daemon threads: a
    landing that ends does not wait for a hint it no longer needs."""

    lead: Lead
    command: str
    setup: str | None
    timeout: float
    names: list[str] | None = None  # found at the first round that could use them (`free`)
    by_tree: dict[str, Hint] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)  # machine -> why it takes no more checks
    ran: list[Hint] = field(default_factory=list)
    confirmed: dict[str, bool] = field(default_factory=dict)  # tree -> what the lead's own check of it said
    busy: dict[str, str] = field(default_factory=dict)  # machine -> the tree it checks now
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.done = threading.Condition(self.lock)

    def free(self) -> list[str]:
        """The machines that may take a check now (the idle ones are looked for the first time asked)."""
        if self.names is None:
            try:
                self.names = idle(self.lead)
            except BalancedError as exc:  # the machines could not be looked at: the landing goes on without them
                self.names = []
                self.dropped["(machines)"] = exc.message.splitlines()[0]
        with self.lock:
            return [m for m in self.names if m not in self.busy and m not in self.dropped]

    def hints(self, chain: Sequence[Tree]) -> dict[int, bool]:
        """What the machines still trusted said of each prefix of `chain` (1-based)."""
        with self.lock:
            found = {i: self.by_tree.get(link.tree) for i, link in enumerate(chain, 1)}
            return {i: h.passed for i, h in found.items() if h is not None and h.machine not in self.dropped}

    def holding(self, chain: Sequence[Tree]) -> set[int]:
        """The prefixes of `chain` a machine checks now."""
        with self.lock:
            trees = set(self.busy.values())
        return {i for i, link in enumerate(chain, 1) if link.tree in trees}

    def send(self, repo_of: Callable[[], Repo], machine: str, link: Tree) -> None:
        """Have `machine` check `link`'s tree, in the background (`repo_of()` is the Repo of the thread that asks)."""
        with self.lock:
            self.busy[machine] = link.tree
        threading.Thread(target=self._one, args=(repo_of, machine, link), daemon=True,
                         name=f"land-machine-{machine}").start()

    def settle(self, seconds: float, trees: set[str]) -> None:
        """Wait up to `seconds` for the machines' checks under way of `trees` (those whose answer can still
        change what the lead checks next)."""
        end = time.monotonic() + seconds
        with self.lock:
            while set(self.busy.values()) & trees and (left := end - time.monotonic()) > 0:
                self.done.wait(left)

    def confirm(self, tree: str, passed: bool) -> None:
        """The lead's own check of `tree` said `passed`: a machine whose hint said otherwise is dropped."""
        with self.lock:
            self.confirmed[tree] = passed
            h = self.by_tree.get(tree)
            if h is not None:
                self._caught(h, passed)

    def _caught(self, h: Hint, passed: bool) -> None:
        """Drop `h`'s machine when its hint said otherwise than the lead's own check (`passed`); the lock held."""
        if h.passed != passed and h.machine not in self.dropped:
            self.dropped[h.machine] = (f"it said {'pass' if h.passed else 'fail'} for tree {h.tree[:12]}, where "
                                       f"this machine's own check said {'pass' if passed else 'fail'}")

    def _one(self, repo_of: Callable[[], Repo], machine: str, link: Tree) -> None:
        try:
            repo = repo_of()
            hint = ask(repo, self.lead, machine, link, (self.command, self.setup), self.timeout)
            notes.add_json(repo, HINTS, hint.tree, hint.record())
        except BalancedError as exc:
            self._drop(machine, f"it did not answer: {exc.message.splitlines()[0]}")
        except Exception as exc:  # noqa: BLE001  (a hint's thread: what went wrong drops the machine, nothing else)
            self._drop(machine, f"its check could not be asked for or kept: {type(exc).__name__}: {exc}")
        else:
            self.heard(hint)
        finally:
            with self.lock:
                self.busy.pop(machine, None)
                self.done.notify_all()

    def heard(self, hint: Hint) -> None:
        """A machine's hint came: kept, and its machine dropped if the lead's own check of that tree, done
        already, said otherwise (a hint that comes after the lead's check is caught too)."""
        with self.lock:
            self.ran.append(hint)
            self.by_tree.setdefault(hint.tree, hint)
            if hint.tree in self.confirmed:
                self._caught(hint, self.confirmed[hint.tree])

    def _drop(self, machine: str, why: str) -> None:
        with self.lock:
            self.dropped.setdefault(machine, why)

    def report(self) -> list[dict[str, Any]]:
        """Each machine's check, for `land --json`: where, which tree, what it said, and that it was a hint."""
        with self.lock:
            return [{"machine": h.machine, "tree": h.tree, "commit": h.commit, "result": "pass" if h.passed else "fail",
                     "code": h.code, "seconds": h.seconds, "hint": True, "dropped": self.dropped.get(h.machine)}
                    for h in self.ran]


def _at(record: dict[str, object]) -> float:
    """When a hint line says it was given; 0 (old: pruned) when its `at` is not a number."""
    at = record.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0


def prune_hints(repo: Repo, *, now: float | None = None, days: float = HINT_DAYS, most: int = HINTS_KEPT) -> int:
    """Keep the hints on the `most` trees hinted at last, within `days`, in one commit of no parent: the rest and
    their history go (no landing reads them, and `sync` does not carry them). How many trees' hints went; nothing
    is written when none go and there is no history to drop, or when a hint was added meanwhile (the next look
    prunes)."""
    tip = repo.read_ref(HINTS)
    if tip is None:
        return 0
    found = notes.all_notes(repo, tip)
    cutoff = (time.time() if now is None else now) - days * 86400
    last = {obj: max((_at(r) for r in json_objects("\n".join(lines))), default=0.0)
            for obj, lines in found.items()}
    kept = sorted((obj for obj, at in last.items() if at >= cutoff), key=lambda obj: -last[obj])[:max(0, most)]
    if len(kept) == len(found) and not notes.has_history(repo, tip):
        return 0
    subject = f"Hints kept by git balanced: the last {len(kept)} trees'"
    ok = notes.keep_only(repo, HINTS, tip, {obj: found[obj] for obj in kept}, subject)
    return len(found) - len(kept) if ok else 0


def ask(repo: Repo, lead: Lead, machine: str, link: Tree, commands: tuple[str, str | None], timeout: float) -> Hint:
    """Push `link`'s commit into `machine`'s copy and run the check of `commands` (check, setup) on it there;
    BalancedError when the machine cannot be reached, refuses, or its answer is not about that tree."""
    from git_balanced.machines.reach import copies
    from git_balanced.machines.reach.remote import RemoteHost
    from git_balanced.untrusted import machine_program

    host = RemoteHost(lead, machine)
    lease, mark = copies.owner_lease(repo, copies.identity(repo))
    ref = "".join(c if c.isalnum() else "-" for c in lead.branch)[:40] or "lead"
    slot = f"{ref}-{os.urandom(4).hex()}"  # a folder of its own there, whatever else runs
    with host.transport.slot(PUSH_TIMEOUT):
        res = repo.push(host.transport.git_url(host.repo_path()), [mark, f"+{link.commit}:{LANDING_REFS}{ref}"],
                        quiet=False, lease=lease, receive_pack=machine_program("receive-pack"),
                        env=host.transport.git_env(), timeout=PUSH_TIMEOUT)
    if res.code != 0:
        raise BalancedError(f"could not push {link.commit[:12]} to {machine}: {(res.err or res.out).strip()[-300:]}")
    request = {"copy": host.repo_path(), "commit": link.commit, "command": commands[0], "setup": commands[1],
               "timeout": timeout, "slot": slot, "ref": f"{LANDING_REFS}{ref}"}  # removed there after the check
    ran = host.transport.run_python(host.reach.runner_source(), ["landcheck"], input=json.dumps(request),
                                    timeout=timeout * (2 if commands[1] else 1) + 60)
    try:
        answer = json.loads(ran.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BalancedError(f"{machine}'s runner did not answer: {(ran.err or ran.out).strip()[-300:]}") from None
    if not isinstance(answer, dict) or answer.get("error"):
        why = answer.get("error") if isinstance(answer, dict) else answer
        raise BalancedError(f"{machine}'s runner refused: {why}")
    if answer.get("tree") != link.tree or answer.get("commit") != link.commit:
        raise BalancedError(f"{machine} answered for tree {str(answer.get('tree'))[:12]}, not {link.tree[:12]}")
    return Hint(machine=machine, tree=link.tree, commit=link.commit, passed=answer.get("code") == 0,
                code=int(answer.get("code", 1)), tail=str(answer.get("tail", "")),
                seconds=float(answer.get("seconds") or 0), at=time.time())
