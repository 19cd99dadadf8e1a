"""The next attempt at a piece, made one way whoever asks for it: you (`git balanced retry`), the loop after a
failure (`retry.decide`), or limits when a piece moves to another agent. It starts from what the job before it
carries (`jobs.CARRIED`), with what its reason changes on top. An agent's next attempt after a failure is told,
after its task, what the last attempt did and why it failed (`last_attempt`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from git_balanced import jobs as J
from git_balanced.engine.cleanup import cleanup
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.vocab import Failure

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
        told = last_attempt(job, carried.get("branch", job.branch))
        if told and carried.get("agent", job.agent) != "shell":  # a shell piece runs its command, and reads nothing
            # Its worker reads it after its task, in its first message (engine/workers.build_request).
            carried["resume_note"] = told
    cleanup(lead, job)
    return J.place(lead.repo, carried)


def last_attempt(job: Job, branch: str) -> str:
    """What the attempt before did and why it failed, in words its next attempt's agent reads (working on
    `branch`), or '' when it did not fail (a move to another agent, say)."""
    why = job.reason or job.failure
    if not why:
        return ""
    did = f"{job.commits} commit(s) on {job.branch}" if job.commits else "no commit"
    lines = [f"Your last attempt at this piece (attempt {job.attempt}) made {did} and did not land: "
             f"{why.rstrip('.')}."]
    if job.summary:
        lines.append(f"It ended saying: {job.summary}")
    from git_balanced.engine.board import check_tail  # here: a first attempt, the engine's start, needs neither
    from git_balanced.landing import checks

    shown = check_tail(job, checks.TAIL_LINES)  # the next attempt's agent reads all the stored tail
    if shown:
        lines.append(f"The check's output ended with:\n```\n{shown}\n```")
    if job.failure == Failure.CONFLICT and job.verdict_paths:
        lines.append(f"It conflicted with the lead's branch in: {', '.join(job.verdict_paths)}.")
    if branch == job.branch and job.commits:
        lines.append("Its commits are on your branch: start from them and mend what failed.")
    elif job.commits:
        lines.append(f"You start from the lead's newest commit; its commits stay on {job.branch}.")
    return "\n".join(lines)
