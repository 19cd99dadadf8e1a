"""The engine's loop over passes: one engine per repository (a flock), woken by commands that add work."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from git_balanced import fence, proc, ui
from git_balanced.engine import shown
from git_balanced.engine.loop import Engine
from git_balanced.engine.upkeep import Upkeep
from git_balanced.errors import BalancedError
from git_balanced.files import Flock, write_atomic
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.shipped import pids
from git_balanced.shipped.runfiles import RUNS_DIR

if TYPE_CHECKING:
    from git_balanced.landing.aside import Aside

BUSY_INTERVAL = 0.5   # seconds between passes while workers run
END_POLL = 0.05  # how often a local worker's end is looked for meanwhile: a stat of one file each

STOP_DRAIN = 5.0  # seconds a stopped engine waits for the cleanup of what landed, when it waits (sweep.WAIT_ENV)
IDLE_INTERVAL = 30.0  # at the most, while nothing runs (schedules need 30 s)


HANDOVER = 5.0  # seconds a starter waits for an exiting engine to end (or to go on) before it starts one anyway
TAKE = 15.0  # seconds a started engine has to take the lock: its imports, and a busy machine
AFTER_ENV = "GIT_BALANCED_ENGINE_AFTER"  # set by start_detached: the pid of the exiting engine the new one waits for


class EngineLock:
    """A flock on `.git/balanced/engine.lock`: a dead engine holds nothing. An engine that will take no more
    work (its last pass, a stop) says so in `engine.exiting` first, so no one says it runs what it won't."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.path = lead.repo.state_dir / "engine.lock"
        self.pid_path = lead.repo.state_dir / shown.PID_FILE
        self.exiting_path = lead.repo.state_dir / "engine.exiting"
        self.lock = Flock(self.path)

    def acquire(self) -> bool:
        after = os.environ.pop(AFTER_ENV, "")  # once: this process's later looks at the lock must not wait
        while not self.lock.take(wait=False):
            # Started to follow an exiting engine: wait while it is on its way out (its pid file goes a moment
            # before its lock does); not once it went on after all, or another engine took the lock.
            holder = self.holder_pid()
            if after and (holder is None or holder == int(after) and self.exiting(holder)):
                time.sleep(0.1)
                continue
            return False
        # A reader never sees it half-written; the start tick tells this engine from a later process given its pid.
        write_atomic(self.pid_path, f"{os.getpid()}\n{pids.start_tick(os.getpid())}\n")
        return True

    def release(self) -> None:
        if self.lock.held:
            self.pid_path.unlink(missing_ok=True)
            self.lock.release()
            self.stay()  # after the lock is gone: until then a starter must not take it for a running engine

    def mark_exiting(self) -> None:
        """Say that this engine takes no more work (before its last pass, or once it is asked to stop)."""
        write_atomic(self.exiting_path, f"{os.getpid()}\n")

    def stay(self) -> None:
        """Take back `mark_exiting`: work came during the last pass, so the engine goes on."""
        if self.exiting(os.getpid()):
            self.exiting_path.unlink(missing_ok=True)

    def leaving(self, lead: Lead, woken: float) -> bool:
        """Whether the engine may end now: marked exiting, then no starter woke it since `woken` (the wake
        stamp at its last pass's start). A starter wakes it before it looks for the mark, so one of the two
        sees the other: the engine goes on, or the starter starts another."""
        self.mark_exiting()
        if wake_stamp(lead) != woken:
            self.stay()
            return False
        return True

    def exiting(self, pid: int) -> bool:
        """Whether the engine of `pid` said it takes no more work."""
        try:
            return int(self.exiting_path.read_text().strip()) == pid
        except (FileNotFoundError, ValueError):
            return False

    def holder_pid(self) -> int | None:
        """The pid in the lock's pid file (a running engine's, or one killed before it could take it away)."""
        return shown.engine_pid(self.lead)

    def holder(self) -> int | None:
        """The pid of the running engine, or None when none runs."""
        if self.acquire():
            self.release()
            return None
        return self.holder_pid()


def wake_stamp(lead: Lead) -> float:
    """When the engine was last asked to look (0 when never)."""
    try:
        return os.stat(lead.wake_path).st_mtime_ns / 1e9
    except FileNotFoundError:
        return 0.0


def _sleep(lead: Lead, seconds: float, stop: list[bool], running: Iterable[Job] = (),
           ended: set[str] | None = None, landing: Aside | None = None) -> None:
    """Sleep until `seconds` pass, a wake-up is asked for, a local worker in `running` ends (its runner
    writes its result.json), the `landing` beside the passes ends, or a stop; a stat a second costs nothing, a
    few every 50 ms little more. A worker that ended while the pass ran (not in `ended`, the ends seen before)
    means no sleep at all."""
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
    step = END_POLL if ends or landing is not None else 0.25 if seconds <= 1 else 1.0
    end = time.monotonic() + seconds
    count = 0
    while not stop[0] and time.monotonic() < end:
        time.sleep(min(step, max(0.0, end - time.monotonic())))
        if landing is not None and landing.done():
            return  # its verdicts are the next pass's to record, and what it landed frees what waits on it
        now = sum(1 for p in ends if os.path.exists(p))
        if now and (now == len(ends) or now == count):
            return  # all ended, or no other ended within a poll of the last: they land as one batch
        count = now
        try:
            if os.stat(lead.wake_path).st_mtime != seen:
                return
        except FileNotFoundError:
            pass


def _say_unfenced(lead: Lead) -> None:
    """Where workers and checks cannot be fenced here, say so at the engine's start, and tell the lead once for
    each reason (again only when the reason changes)."""
    words = fence.unfenced_words()
    told = lead.repo.state_dir / "unfenced-told"
    if words is None:
        told.unlink(missing_ok=True)
        return
    ui.note(f"[balanced] {words}")
    try:
        if told.read_text(encoding="utf-8") == words:
            return
    except FileNotFoundError:
        pass
    from git_balanced.channel.inbox import post
    from git_balanced.files import write_atomic

    post(lead.repo, lead.branch, words, kind="unfenced")
    write_atomic(told, words)


def run_loop(lead: Lead, *, once: bool, until_idle: bool) -> int:
    lock = EngineLock(lead)
    if not lock.acquire():
        raise BalancedError(f"An engine runs for this repository already (pid {lock.holder()}).",
                            hint="`git balanced engine --stop` stops it; `git balanced board` shows what it does.")
    stop = [False]

    def on_term(signum: int, frame: object) -> None:
        # Heard at once, whatever the pass does: a running check ends its process tree and raises Stopped,
        # and the loop looks at `stop` before each pass and while it sleeps.
        stop[0] = True
        lock.mark_exiting()  # asked to stop: a starter from now on starts another engine
        proc.ask_to_stop()

    def on_int(signum: int, frame: object) -> None:
        # Ctrl-C ends the checks too: the landing waits for its check threads, which would otherwise run on.
        proc.ask_to_stop()
        raise KeyboardInterrupt

    proc.go_on()  # before the handlers: the first ask for the stop flag makes it, under a lock a handler must not take
    old = signal.signal(signal.SIGTERM, on_term)
    old_int = signal.getsignal(signal.SIGINT)
    if old_int is not signal.SIG_IGN:  # an engine started in the background with SIGINT ignored keeps it so
        signal.signal(signal.SIGINT, on_int)
    idle = False
    ended: set[str] = set()  # the local workers' ends the loop has seen: each cuts one sleep short, once
    eng: Engine | None = None
    try:
        eng = Engine(lead, land_aside=not once)  # one pass only: its landing ends within it
        eng.says_full = not until_idle
        eng.sweeper.resume()  # what an earlier engine's cleanup left undone, if it was killed
        upkeep = Upkeep(lead)
        _say_unfenced(lead)
        if once:
            lock.mark_exiting()  # its one pass is its last: work stored meanwhile needs another engine
        while not stop[0]:
            woken = wake_stamp(lead)
            busy = eng.pass_once()
            if until_idle and eng.full is not None:  # a run to the end cannot wait for room: it says so, exit 1
                raise eng.full
            if once or (until_idle and not busy):
                if not once and not lock.leaving(lead, woken):
                    continue  # work came while it looked: it looks again rather than leave it
                idle = not busy
                break
            running = eng.running
            # Nothing runs and nothing lands beside the pass, so nothing is due before the next pass: pack what lies
            # loose. (An engine that ends when idle leaves it to the next that stays: its caller waits for it.)
            if not running and eng.landing is None and not stop[0]:
                upkeep.idle()
            short = bool(running) or eng.landing is not None  # a landing that ends wakes it (lead.wake_engine)
            _sleep(lead, BUSY_INTERVAL if short else (2.0 if busy else IDLE_INTERVAL), stop, running, ended,
                   eng.landing)
    except proc.Stopped:  # a check was under way: it was ended, and nothing of it recorded
        print("[balanced] Stopped (SIGTERM) during a check; the check was ended and counts for nothing.",
              file=sys.stderr, flush=True)
    finally:
        try:
            if eng is not None:
                if eng.end_landing() and stop[0]:  # its checks end at once, asked to stop
                    print("[balanced] Stopped (SIGTERM) during a check; the check was ended and counts for nothing.",
                          file=sys.stderr, flush=True)
                # What landed is cleaned up by a process of its own, which the engine does not wait for (unless
                # GIT_BALANCED_SWEEP_WAIT=1; asked to stop, a moment only: a machine out of reach must not hold the
                # stop and the lock). What a killed one leaves, the next engine or `gc` finishes (sweep.py).
                eng.sweeper.end(stopped=stop[0], wait=STOP_DRAIN)
        finally:  # a Ctrl-C while it waits lets go of the lock all the same
            signal.signal(signal.SIGTERM, old)
            if old_int is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, old_int)
            proc.go_on()
            lock.release()
    if stop[0]:
        return 0
    return _until_idle_code(eng) if until_idle and idle and eng is not None else 0


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
    """An engine for this repository in the background that will take the work stored before this call:
    (its pid, whether this call started it). One that is exiting is not taken for it."""
    lock = EngineLock(lead)
    lead.wake_engine()  # before looking for the mark: an engine in its last look sees this and goes on
    pid = first = lock.holder()
    end = time.monotonic() + HANDOVER
    # Waited on by its pid file alone: taking the lock to look, even for a moment, could turn away an engine
    # starting at that moment.
    while pid is not None and lock.exiting(pid) and time.monotonic() < end:
        time.sleep(0.05)
        pid = _named(lock)
    if pid is not None and not lock.exiting(pid):
        return pid, False
    # Through the front door, as the console script starts: no click to import.
    args = ["engine"] + (["--until-idle"] if until_idle else [])
    after = pid or first  # an engine seen exiting: the new one waits for it to let go of the lock
    env = None if after is None else {**os.environ, AFTER_ENV: str(after)}
    log = lead.repo.state_dir / "engine.log"
    new = proc.spawn_ours("git_balanced.front", args, cwd=lead.repo.root, log=log, env=env)  # not the checkout's
    return _taken(lock, new, log, after=after), True


def _taken(lock: EngineLock, pid: int, log: os.PathLike[str], *, after: int | None) -> int:
    """`pid`, once it holds the engine lock (or waits for the exiting engine `after`), or the engine that took
    the lock when it could not; a BalancedError with the end of its log when it died with none running."""
    end = time.monotonic() + TAKE
    while time.monotonic() < end:
        named = _named(lock)
        if named == pid:
            return pid
        if not _alive(pid):
            other = lock.holder()  # it is gone, so a look that takes the lock turns no one away
            if other is not None and not lock.exiting(other):
                return other  # another starter's engine got there first, and runs
            break
        if after is not None and named == after and lock.exiting(after):
            return pid  # it takes over once the exiting engine ended
        time.sleep(0.05)
    with open(log, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 2000))
        tail = [x for x in fh.read().decode(errors="replace").splitlines() if x.strip()][-3:]
    raise BalancedError("The engine did not start" + (f": {' '.join(tail)}" if tail else "."),
                        hint=f"its log is {log}; `git balanced engine` runs it here, where you see why.")


def _named(lock: EngineLock) -> int | None:
    """The engine the lock's pid file names, while that process lives (read without taking the lock)."""
    return shown.engine_running(lock.lead)  # else killed, and its file left behind (its pid perhaps reused)


def _alive(pid: int) -> bool:
    """Whether our child `pid` still runs (it is reaped here when it ended)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not ours to reap, or reaped already
        return pids.alive(pid)
    return done == 0
