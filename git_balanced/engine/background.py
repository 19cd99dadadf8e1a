"""The engine's loop over passes: one engine per repository (a flock), woken by commands that add work."""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from collections.abc import Iterable

from git_balanced import ui
from git_balanced.engine.loop import Engine
from git_balanced.errors import BalancedError
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.shipped.runner import RUNS_DIR

BUSY_INTERVAL = 0.5   # seconds between passes while workers run
END_POLL = 0.05  # how often a local worker's end is looked for meanwhile: a stat of one file each

IDLE_INTERVAL = 30.0  # at the most, while nothing runs (schedules need 30 s)


class EngineLock:
    """A flock on `.git/balanced/engine.lock`: a dead engine holds nothing."""

    def __init__(self, lead: Lead) -> None:
        self.path = lead.repo.state_dir / "engine.lock"
        self.pid_path = lead.repo.state_dir / "engine.pid"
        self.fd: int | None = None

    def acquire(self) -> bool:
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            return False
        self.pid_path.write_text(f"{os.getpid()}\n")
        return True

    def release(self) -> None:
        if self.fd is not None:
            self.pid_path.unlink(missing_ok=True)
            os.close(self.fd)
            self.fd = None

    def holder(self) -> int | None:
        """The pid of the running engine, or None when none runs."""
        if self.acquire():
            self.release()
            return None
        try:
            return int(self.pid_path.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None


def _sleep(lead: Lead, seconds: float, stop: list[bool], running: Iterable[Job] = (),
           ended: set[str] | None = None) -> None:
    """Sleep until `seconds` pass, a wake-up is asked for, a local worker in `running` ends (its runner
    writes its result.json), or a stop; a stat a second costs nothing, a few every 50 ms little more.
    A worker that ended while the pass ran (not in `ended`, the ends seen before) means no sleep at all."""
    try:
        seen = os.stat(lead.wake_path).st_mtime
    except FileNotFoundError:
        seen = 0.0
    runs = os.path.expanduser(RUNS_DIR)
    paths = [os.path.join(runs, j.runner_key, "result.json") for j in running if j.machine == "local"]
    done = {p for p in paths if os.path.exists(p)}
    if ended is not None:
        new = done - ended
        ended.update(done)
        if new:
            return
    ends = [p for p in paths if p not in done]
    step = END_POLL if ends else 0.25 if seconds <= 1 else 1.0
    end = time.monotonic() + seconds
    count = 0
    while not stop[0] and time.monotonic() < end:
        time.sleep(min(step, max(0.0, end - time.monotonic())))
        now = sum(1 for p in ends if os.path.exists(p))
        if now and (now == len(ends) or now == count):
            return  # all ended, or no other ended within a poll of the last: they land as one batch
        count = now
        try:
            if os.stat(lead.wake_path).st_mtime != seen:
                return
        except FileNotFoundError:
            pass


def run_loop(lead: Lead, *, once: bool, until_idle: bool) -> int:
    lock = EngineLock(lead)
    if not lock.acquire():
        raise BalancedError(f"An engine runs for this repository already (pid {lock.holder()}).",
                            hint="`git balanced engine --stop` stops it; `git balanced board` shows what it does.")
    stop = [False]

    def on_term(signum: int, frame: object) -> None:
        stop[0] = True

    old = signal.signal(signal.SIGTERM, on_term)
    idle = False
    ended: set[str] = set()  # the local workers' ends the loop has seen: each cuts one sleep short, once
    try:
        eng = Engine(lead)
        while not stop[0]:
            busy = eng.pass_once()
            if once or (until_idle and not busy):
                idle = not busy
                break
            running = eng.running
            _sleep(lead, BUSY_INTERVAL if running else (2.0 if busy else IDLE_INTERVAL), stop, running, ended)
    finally:
        signal.signal(signal.SIGTERM, old)
        lock.release()
    return _until_idle_code(eng) if until_idle and idle else 0


def _until_idle_code(eng: Engine) -> int:
    """0 when every piece this run saw landed; else 1, with each one that did not and why on stderr."""
    from git_balanced.engine.outcome import unlanded

    lines = unlanded(eng)
    if not lines:
        return 0
    print("[balanced] Nothing else can move, and not every piece landed:", file=sys.stderr)
    for line in lines:
        print(f"  {ui.plain(line)}", file=sys.stderr)
    print("  `git balanced board` shows them; `git balanced inbox` says more.", file=sys.stderr, flush=True)
    return 1


def start_detached(lead: Lead, *, until_idle: bool = False) -> tuple[int, bool]:
    """An engine for this repository in the background: (its pid, whether this call started it)."""
    from git_balanced import proc

    pid = EngineLock(lead).holder()
    if pid is not None:
        return pid, False
    argv = [sys.executable, "-m", "git_balanced.cli", "engine"] + (["--until-idle"] if until_idle else [])
    return proc.spawn_detached(argv, cwd=lead.repo.root, log=lead.repo.state_dir / "engine.log"), True
