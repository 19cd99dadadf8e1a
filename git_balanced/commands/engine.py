"""`git balanced engine`: run the loop once, until idle, in the background, or stop it. One per repository."""

from __future__ import annotations

import os
import signal
import time

from git_balanced import ui
from git_balanced.engine.background import EngineLock, run_loop, start_detached
from git_balanced.errors import BalancedError
from git_balanced.lead import open_lead


def engine_command(*, once: bool, until_idle: bool, detach: bool, stop: bool) -> int:
    lead = open_lead()
    lock = EngineLock(lead)
    if stop:
        pid = lock.holder()
        if pid is None:
            ui.say("No engine runs for this repository.")
            return 0
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if lock.holder() is None:
                ui.say(f"Stopped the engine (pid {pid}).")
                return 0
            time.sleep(0.1)
        raise BalancedError(f"The engine (pid {pid}) did not stop within 10 seconds.",
                            hint=f"it may be in the middle of a check; `kill {pid}` again, or wait.")
    if detach:
        pid, started = start_detached(lead, until_idle=until_idle)
        if not started:
            ui.say(f"An engine runs already (pid {pid}).")
            return 0
        ui.say(f"The engine runs in the background (pid {pid}); its log is {lead.repo.state_dir / 'engine.log'}. "
               "`git balanced engine --stop` stops it.")
        return 0
    return run_loop(lead, once=once, until_idle=until_idle)
