"""`stop`, `retry` and `dismiss`: the lead's hand on one job. Each is recorded on the job and in the inbox."""

from __future__ import annotations

from git_balanced import jobs as J
from git_balanced import ui
from git_balanced.engine.control import retry_job, stop_job
from git_balanced.errors import BalancedError
from git_balanced.job_events import Dismissed, record
from git_balanced.lead import open_lead
from git_balanced.vocab import AT_WORK


def stop_command(name: str) -> int:
    lead = open_lead()
    job, kept = stop_job(lead, name)
    ui.say(f"Stopped {job.piece} ({job.id})." + (f" Its branch {kept} is kept." if kept else ""))
    return 0


def retry_command(name: str) -> int:
    lead = open_lead()
    job, new = retry_job(lead, name)
    ui.say(f"{job.piece} tries again as job {new} (attempt {job.attempt + 1}); the engine starts it.")
    return 0


def dismiss_command(name: str) -> int:
    lead = open_lead()
    job = J.resolve(J.all_jobs(lead.repo), name, lead.repo, lead.branch)
    if job.state in AT_WORK:
        raise BalancedError(f"{job.piece} ({job.id}) is {job.state}.", hint="`git balanced stop` it first.")
    record(lead.repo, job.id, Dismissed(), f"{job.piece}: dismissed from the board")
    ui.say(f"Dismissed {job.piece} ({job.id}) from the board; `git log refs/balanced/jobs/{job.id}` keeps "
           "its history.")
    return 0
