"""A landing run beside the engine's pass: the queue in a thread of its own, so the pass never waits on a check.

The engine starts one with the finished jobs' candidates and goes on (watching, starting, deciding); a later
pass takes its verdicts and records them. The thread works on a Repo of its own (the pass's keeps its listing
cache to itself), holds the repository's landing lock like any landing, and wakes the engine when it ends.
"""

from __future__ import annotations

import threading

from git_balanced.git import Repo
from git_balanced.landing.queue import Candidate, Queue, Verdict
from git_balanced.lead import Lead


class Aside:
    """One landing run in its own thread: `done()` says whether it ended, `verdicts()` gives what it decided,
    or raises what stopped it (a BalancedError, proc.Stopped) in the caller's thread."""

    def __init__(self, lead: Lead, candidates: list[Candidate]) -> None:
        self.lead = lead
        self.jobs = {c.job for c in candidates if c.job}
        self._candidates = candidates
        self._verdicts: list[Verdict] = []
        self._error: BaseException | None = None
        self.checks = 0  # the check runs it spent, once it ended
        self._repo = Repo.discover(self.lead.repo.root)
        # Not a daemon: a process that ends meanwhile waits for its landing (a stop ends the check at once).
        self._thread = threading.Thread(target=self._run, name="balanced-landing")
        self._thread.start()

    def _run(self) -> None:
        try:
            queue = Queue(Lead(self._repo, self.lead.branch))
            self._verdicts = queue.run(self._candidates)
            self.checks = queue.check_runs
        except BaseException as exc:  # handed to the pass that takes the result
            self._error = exc
        finally:
            self.lead.wake_engine()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def verdicts(self) -> list[Verdict]:
        """The verdicts, once it ended (it is waited for); what stopped it is raised here instead."""
        self._thread.join()
        # The stale locks it removed are told by the engine, as the ones its pass removes (Repo.cleared).
        self.lead.repo.cleared.extend(self._repo.cleared)
        self._repo.cleared.clear()
        if self._error is not None:
            raise self._error
        return self._verdicts
