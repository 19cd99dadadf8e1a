"""Landed workers' housekeeping off the engine's pass: their worktrees, run folders and copies removed by a thread."""

from __future__ import annotations

import sys
import threading

from git_balanced.engine.workers import cleanup_many
from git_balanced.jobs import Job
from git_balanced.lead import Lead


class Sweeper:
    """Landed workers' housekeeping off the pass: the pass hands their jobs over (`mark`), and a thread of its own
    removes their worktrees, run folders and copies (`cleanup_many`: one `git worktree prune` per machine for
    all that came meanwhile), while the passes go on; `drain` waits for what was handed over."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self._todo: list[Job] = []
        self._busy = False
        self._cond = threading.Condition()

    def mark(self, jobs: list[Job]) -> None:
        """Hand these jobs' cleanup over to the thread (started when none runs)."""
        if not jobs:
            return
        with self._cond:
            self._todo.extend(jobs)
            if self._busy:
                return
            self._busy = True
        threading.Thread(target=self._run, name="balanced-sweep", daemon=True).start()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every job handed over was cleaned up (at most `timeout` seconds); True when it was."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                batch, self._todo = self._todo, []
                if not batch:
                    self._busy = False
                    self._cond.notify_all()
                    return
            try:
                cleanup_many(self.lead, batch)
            except Exception as exc:  # housekeeping: what is left is removed with the job's machine later
                print(f"[balanced] Could not clean up after {', '.join(j.id for j in batch)}: {exc}",
                      file=sys.stderr, flush=True)
