"""`git balanced engine`: run the loop once, until idle, in the background, or stop it. One per repository."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from git_balanced import fence, proc, ui
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead, open_lead

if TYPE_CHECKING:
    from git_balanced.engine.background import EngineLock

STOP_WAIT = 8.0  # seconds an engine has to stop after SIGTERM before it is killed (its checks end in ~3)
KILL_WAIT = 5.0  # and to be gone after SIGKILL


def engine_command(*, once: bool, until_idle: bool, detach: bool, stop: bool) -> int:
    lead = open_lead()
    if stop:
        return stop_engine(lead)
    from git_balanced.engine.background import start_detached

    if detach:
        pid, started = start_detached(lead, until_idle=until_idle)
        if not started:
            ui.say(f"An engine runs already (pid {pid}).")
            return 0
        ui.say(f"The engine runs in the background (pid {pid}); its log is {lead.repo.state_dir / 'engine.log'}. "
               "`git balanced engine --stop` stops it.")
        return 0
    return run_here(lead, once=once, until_idle=until_idle)


def run_here(lead: Lead, *, once: bool, until_idle: bool, told: TextIO | None = None) -> int:
    """The engine in this process, each event told as it is recorded (on stdout, or on `told`); its exit code.
    Whether the fence works here is asked in a thread of its own meanwhile (its processes start and end while
    this one imports the engine and reads the state); the engine's start and its workers take the answer."""
    probe = threading.Thread(target=fence.why_unavailable, name="fence-probe", daemon=True)
    probe.start()
    try:
        from git_balanced.engine.background import run_loop
        from git_balanced.engine.narrate import Above, Narrator

        narrator = Narrator(lead.repo, out=told)  # a line per event as it is recorded, a status line on a terminal
        narrator.start()
        try:
            with contextlib.redirect_stderr(Above(narrator, sys.stderr)):
                return run_loop(lead, once=once, until_idle=until_idle)
        finally:
            narrator.stop()
    finally:
        probe.join()  # its folder removed and its processes ended, whatever ended the engine


def stop_engine(lead: Lead) -> int:
    """Stop this repository's engine and its checks, whatever they do: SIGTERM, then SIGKILL past STOP_WAIT;
    then any check still running in its scratch folders is ended too. Says what it did."""
    from git_balanced.engine.background import EngineLock
    from git_balanced.landing import checks

    lock = EngineLock(lead)
    pid = lock.holder()
    prefix = checks.marks_of(lead.repo)
    if pid is None:
        left = proc.end_tree(None, prefix)
        ui.say("No engine runs for this repository." +
               (f" Ended {left} process(es) of checks a killed engine left running." if left else ""))
        return 0
    with contextlib.suppress(ProcessLookupError):  # it ended of itself meanwhile
        os.kill(pid, signal.SIGTERM)
    how = "SIGTERM"
    if not _gone(lock, STOP_WAIT):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        how = f"SIGTERM, then SIGKILL after {STOP_WAIT:g} s"
        if not _gone(lock, KILL_WAIT):
            raise BalancedError(f"The engine (pid {pid}) did not stop, even after SIGKILL.",
                                hint=f"see what holds {lock.path}: `fuser {lock.path}`.")
    left = proc.end_tree(None, prefix)
    ui.say(f"Stopped the engine (pid {pid}) with {how}." +
           (f" Ended {left} process(es) of its checks that were still running." if left else ""))
    return 0


def _gone(lock: EngineLock, seconds: float) -> bool:
    """Whether the engine let its lock go within `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if lock.holder() is None:
            return True
        time.sleep(0.1)
    return lock.holder() is None
