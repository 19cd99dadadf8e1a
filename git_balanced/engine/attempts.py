"""The next attempt at a piece, made one way whoever asks for it: you (`git balanced retry`), the loop after a
failure (`retry.decide`), or limits when a piece moves to another agent. It starts from what the job before it
carries (`jobs.CARRIED`), with what its reason changes on top."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from git_balanced import jobs as J
from git_balanced.engine import workers
from git_balanced.jobs import Job
from git_balanced.lead import Lead

KEEP: Any = object()  # a field the next attempt takes as the one before had it


@dataclass(frozen=True, kw_only=True)
class Next:
    """How the next attempt differs from the one before it: `retry_reason` says why there is one; a field left
    at KEEP is carried over unchanged."""

    retry_reason: str
    same_attempt: bool = False  # a move to another agent carries on the same attempt, on the same branch
    base: str | None = KEEP  # the commit it starts from
    agent: str = KEEP
    model: str | None = KEEP
    machine: str = KEEP
    why: str = KEEP  # why it runs on its machine
    branch: str = KEEP
    budget_usd: float | None = KEEP
    not_before: float = KEEP  # it starts no earlier (a pause before a retry)
    moved_from: str | None = KEEP

    def changes(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "same_attempt" and getattr(self, f.name) is not KEEP}


def next_attempt(lead: Lead, job: Job, nxt: Next) -> str:
    """Place the next attempt after `job` and return its id. The old attempt's worktree holds the branch, so it
    goes first: the new attempt continues from its commits elsewhere."""
    carried = job.carried()
    carried.update(previous=job.id, **nxt.changes())
    if not nxt.same_attempt:
        carried["attempt"] = job.attempt + 1
    workers.cleanup(lead, job)
    return J.place(lead.repo, carried)
