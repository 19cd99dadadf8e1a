"""The lead's hand on one job: stop it, or try it again. Each is recorded on the job and in the inbox; the
`stop` and `retry` commands and the lead's tools both come here."""

from __future__ import annotations

from git_balanced import jobs as J
from git_balanced.channel.inbox import post
from git_balanced.channel.told import tell_and_record
from git_balanced.engine import budget, workers
from git_balanced.engine.attempts import Next, next_attempt
from git_balanced.errors import BalancedError
from git_balanced.job_events import Failed, Retried
from git_balanced.lead import Lead
from git_balanced.vocab import ENDED_BADLY, LIVE, STOPPABLE, Failure, JobState


def stop_job(lead: Lead, name: str) -> tuple[J.Job, str | None]:
    """Stop the job named (an id, a unique prefix or its branch); returns it and the branch kept, if any."""
    job = J.resolve(J.all_jobs(lead.repo), name, lead.repo, lead.branch)
    if job.state not in STOPPABLE:
        raise BalancedError(f"{job.piece} ({job.id}) is {job.state}, so there is nothing to stop.",
                            hint="`git balanced dismiss` hides it from the board.")
    tell_and_record(lead.repo, lead.branch, job.id,
                    Failed(failure=Failure.STOPPED, reason="you stopped it", ended=JobState.STOPPED, decided=True),
                    f"{job.piece}: stopped by you", f"{job.piece}: you stopped it; it is not tried again", job=job.id)
    if job.state in (JobState.RUNNING, JobState.PAUSED):
        workers.stop(lead, job)
    return job, job.branch if lead.repo.read_ref(f"refs/heads/{job.branch}") else None


def retry_job(lead: Lead, name: str) -> tuple[J.Job, str]:
    """Try a failed or stopped job again as a new attempt; returns the old job and the new job's id."""
    everyone = J.all_jobs(lead.repo)
    job = J.resolve(everyone, name, lead.repo, lead.branch)
    if job.state == JobState.LANDED:
        raise BalancedError(f"{job.piece} ({job.id}) landed already; there is nothing to try again.",
                            hint="store a new plan for more work on it.")
    if job.state in LIVE:
        raise BalancedError(f"{job.piece} ({job.id}) is {job.state}; only a failed or stopped job is tried again.",
                            hint="`git balanced stop` it first.")
    newest = J.latest_by_piece(everyone).get((job.plan, job.piece))
    if newest is not None and newest.id != job.id:  # one live attempt per piece, and on the newest one
        raise BalancedError(f"{job.piece} was tried again already, as job {newest.id} ({newest.state}).",
                            hint=f"`git balanced retry {newest.id}` if that one failed too."
                            if newest.state in ENDED_BADLY else "see `git balanced board`.")
    budget.refuse_if_spent(lead, job, everyone.values())
    new = next_attempt(lead, job, Next(retry_reason="you asked for it", base=lead.repo.rev_parse(lead.ref)))
    said = f"{job.piece}: tries again as you asked: attempt {job.attempt + 1}"
    if job.state != JobState.RETRIED:
        tell_and_record(lead.repo, lead.branch, job.id, Retried(next=new), f"{job.piece}: tried again as {new}", said,
                        job=new)
    else:
        post(lead.repo, lead.branch, said, job=new)
    lead.wake_engine()
    return job, new
