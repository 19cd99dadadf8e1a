"""What this process holds to reach machines, in one object (DESIGN §11): the SSH transports, the runner
sessions, the home folder of each SSH user, the requests read ahead or sent together, the bases pushed.

A long-running engine pays for one SSH connection and one runner session per machine, and pushes a base to a
machine once, not once per piece, because these live as long as the process. They are kept in memory only:
a copy that was wiped meanwhile is pushed to again by the next engine. `process.part(Reach)` gives this
process's one; it is passed down to what uses it, and `close()` (on `process.forget()`, and at exit) waits
for the cleanups on their way, then closes the sessions.

    reach = process.part(Reach)
    t = reach.transport(host)
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.reach import batched, sessions
from git_balanced.machines.reach.transport import Transport, config_path
from git_balanced.shipped import runner

# The requests to one machine sent together (batched.py) are kept by (host, config, multiplexed, repository).
BatchKey = tuple[str, str, bool, str]
# A base pushed to a machine's copy: (machine, this repository's git folder, base commit).
PushKey = tuple[str, str, str]


def multiplexed() -> bool:
    """Whether commands share one connection per machine (off when GIT_BALANCED_SSH_MULTIPLEX=0)."""
    return os.environ.get("GIT_BALANCED_SSH_MULTIPLEX", "1").strip().lower() not in ("0", "no", "false", "off")


class Reach:
    """This process's routes to machines and what serves them; one per process (`process.part(Reach)`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._transports: dict[tuple[str, bool], Transport] = {}
        self._homes: dict[tuple[str, bool, str], str] = {}
        self._source: str | None = None
        self._pools: dict[tuple[str, ...], sessions.Pool] = {}
        self._ahead: dict[BatchKey, batched.ReadAhead] = {}
        self._later: dict[BatchKey, batched.Coalesced] = {}
        self._pushed: set[PushKey] = set()
        self._pushing: dict[PushKey, threading.Lock] = {}

    # -- connections -----------------------------------------------------------------------------------------
    def transport(self, host: SshHost | str) -> Transport:
        """The Transport to an SSH host (one per host, so its master is found without asking ssh); made again
        when the SSH config or GIT_BALANCED_SSH_MULTIPLEX changed."""
        key = (str(host), multiplexed())
        with self._lock:
            t = self._transports.get(key)
            if t is None or t.config != config_path():
                t = self._transports[key] = Transport(host, multiplex=key[1])
            return t

    def use(self, t: Transport) -> None:
        """Take `t` as the transport to its host (a test gives one with a shorter connect timeout)."""
        with self._lock:
            self._transports[(t.name, t.multiplex)] = t

    def home(self, t: Transport, timeout: float) -> str:
        """The home folder of the SSH user there, asked once per process."""
        key = (t.name, t.multiplex, str(t.config))
        with self._lock:
            found = self._homes.get(key)
        if found is None:
            res = t.run(["sh", "-c", 'cd && pwd'], timeout=timeout)
            found = res.out.strip()
            if not res.ok or not found.startswith("/"):
                raise BalancedError(f"Machine {t.name} did not say where its home folder is: {res.err.strip()}",
                                    hint=f"try `ssh {t.name} pwd`.")
            with self._lock:
                self._homes[key] = found
        return found

    def runner_source(self) -> str:
        """The runner's source, read once: it travels on stdin to each SSH machine."""
        if self._source is None:
            self._source = runner.source()
        return self._source

    def pool(self, key: tuple[str, ...], opener: sessions.Opener) -> sessions.Pool:
        """The runner sessions for `key` (a machine, and the environment its sessions were opened in: a
        session keeps the HOME and the rest it started with)."""
        full = (*key, str(hash(frozenset(os.environ.items()))))
        with self._lock:
            p = self._pools.get(full)
            if p is None:
                p = self._pools[full] = sessions.Pool(opener)
            return p

    # -- requests sent together ------------------------------------------------------------------------------
    def batches(self, key: BatchKey) -> tuple[batched.ReadAhead, batched.Coalesced]:
        """The logs read ahead from one machine for one repository, and its cleanups sent together."""
        with self._lock:
            ahead = self._ahead.setdefault(key, batched.ReadAhead())
            later = self._later.setdefault(key, batched.Coalesced())
        return ahead, later

    def settle(self) -> None:
        """Wait for the cleanups on their way to every machine."""
        with self._lock:
            pending = list(self._later.values())
        for c in pending:
            c.wait()

    # -- bases pushed ------------------------------------------------------------------------------------------
    def push_once(self, key: PushKey, push: Callable[[], None], *, again: bool = False) -> None:
        """Run `push` for `key` unless this process pushed it already (`again` pushes anyway). The pieces of
        one pass share a base: the first start pushes it, the rest wait for it and find it there."""
        with self._lock:
            lock = self._pushing.setdefault(key, threading.Lock())
        with lock:
            if key in self._pushed and not again:
                return
            push()
            with self._lock:
                self._pushed.add(key)

    def pushed(self) -> set[PushKey]:
        """The bases this process pushed, as a copy."""
        with self._lock:
            return set(self._pushed)

    # -- the end -------------------------------------------------------------------------------------------
    def close(self, *, wait: bool = True) -> None:
        """Wait for the cleanups on their way, close every session, and forget the rest (at exit, in a test,
        or when the SSH setup changed). Without `wait`, at exit, the sessions' runners end on their own: each
        reads the end of its stdin and exits, and the process need not wait for that."""
        self.settle()
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
            self._transports.clear()
            self._homes.clear()
            self._ahead.clear()
            self._later.clear()
            self._pushed.clear()
            self._pushing.clear()
        for p in pools:
            p.close(wait=wait)


def _at_exit() -> None:
    if process.has(Reach):
        process.part(Reach).close(wait=False)


atexit.register(_at_exit)
