"""Asking machines over SSH whether they answer now, before placement counts on them.

Each machine is asked `true` through this process's transport to it, all at once. One that does not answer
in time is kept out of placement for a while (records.mark_timed_out), so the next pass does not wait on it
again. One that SSH refuses to log in to (a key, a changed host key) is held until it answers (held.py).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.machines.inventory import held, records
from git_balanced.machines.reach import auth
from git_balanced.machines.reach.routes import Reach
from git_balanced.machines.reach.transport import MachineUnreachable

PROBE_TIMEOUT = 5.0


def unanswering(repo: Repo, machines: list[str]) -> dict[str, str]:
    """Which of `machines` cannot take work now, and why in words; all of them asked over SSH at once."""
    reach = process.part(Reach)

    def one(machine: str) -> tuple[str, str]:
        def timed_out(why: str) -> str:
            records.mark_timed_out(repo, machine, why)
            return records.ineligible(repo).get(machine, why)

        spec = records.box_of(machine)
        if spec is not None and spec.on is None:  # a box made here: its engine is asked as each box is made
            return machine, ""
        try:
            t = reach.transport(records.host_alias(machine))
            started = time.monotonic()
            res = t.run(["true"], timeout=PROBE_TIMEOUT)
        except MachineUnreachable as exc:
            why = exc.detail or exc.message
            no = auth.refused(str(records.host_alias(machine)), why)
            if no is not None:  # SSH refused to log in: held, not out of reach
                held.hold(repo, machine, no.kind, no.detail, no.fix, no.words)
                return machine, held.why(held.held(repo)[machine])
            if exc.timed_out:
                return machine, timed_out(f"it did not answer in time ({why})")
            return machine, f"it cannot be reached ({why})"
        except BalancedError as exc:
            return machine, exc.message
        if res.code == 124:
            return machine, timed_out(f"it did not answer within {PROBE_TIMEOUT:.0f} s")
        if not res.ok:
            return machine, f"`true` failed there (exit {res.code}) after {time.monotonic() - started:.1f} s"
        held.release(repo, machine)
        return machine, ""

    if not machines:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(machines))) as pool:
        return {m: why for m, why in pool.map(one, machines) if why}
