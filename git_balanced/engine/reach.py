"""Reaching one worker from the lead: its log, read through the machines' one door (this machine, or another
over SSH) from where the last read ended, and a line told to it, which a running agent reads at its next tool
call (its PreToolUse hook: shipped/pretool.take_told). `logs`, `tell`, the lead's tools and the board's app
come here."""

from __future__ import annotations

from dataclasses import dataclass

from git_balanced import jobs as J
from git_balanced.engine.workers import host_for
from git_balanced.errors import BalancedError, UsageError
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.shipped.messages import LogRequest, TellRequest
from git_balanced.shipped.runfiles import RUNS_DIR
from git_balanced.vocab import Action, JobState

CHUNK = 1 << 20  # bytes read of a log at a time


@dataclass
class Chunk:
    """What a read of a worker's log gave: its text from `offset`, where the next read starts, and whether the
    run folder holding it is there at all."""

    text: str
    next_offset: int
    found: bool


def job_named(lead: Lead, name: str) -> Job:
    """The job a name gives (an id, a prefix, a handle, a branch)."""
    return J.resolve(J.all_jobs(lead.repo), name, lead.repo, lead.branch)


def read_log(lead: Lead, job: Job, offset: int = 0) -> Chunk:
    """The worker's log from `offset` (at most CHUNK bytes), read on its machine through its runner."""
    if job.state == JobState.QUEUED:
        return Chunk("", offset, False)
    answer = host_for(lead, job.machine).call(Action.LOG, LogRequest(job=job.runner_key, runs_dir=RUNS_DIR,
                                                                     offset=offset, limit=CHUNK).to_json())
    if answer.get("error"):
        raise BalancedError(f"The runner on {job.machine} could not read the log of {job.piece}: {answer['error']}",
                            hint=f"`git balanced show {job.id}` says what the worker did.")
    return Chunk(str(answer.get("data") or ""), int(answer.get("next_offset") or offset), bool(answer.get("size")))


def tell(lead: Lead, name: str, text: str) -> Job:
    """Leave `text` for a running agent worker, which reads it at its next tool call; refused, saying why, for a
    worker that is not running or cannot hear (a shell command reads nothing)."""
    text = " ".join(text.split())
    if not text:
        raise UsageError("There is nothing to tell: TEXT is empty.", hint='git balanced tell e3 "Use the v2 API."')
    job = job_named(lead, name)
    if job.state != JobState.RUNNING:
        raise BalancedError(f"{job.piece} ({job.id}) is {job.state}, not running, so there is nobody to tell.",
                            hint="tell a running worker; `git balanced board` shows which run.")
    if job.agent == "shell":
        raise BalancedError(f"{job.piece} ({job.id}) is a shell worker: it runs its command and reads nothing, so it "
                            "cannot hear you.", hint=f"stop it (`git balanced stop {job.id}`) and store the piece "
                                                     "again with what it should do.")
    answer = host_for(lead, job.machine).call(Action.TELL, TellRequest(job=job.runner_key, text=text,
                                                                       runs_dir=RUNS_DIR).to_json())
    if answer.get("error"):
        raise BalancedError(f"The runner on {job.machine} could not tell {job.piece}: {answer['error']}",
                            hint="`git balanced board` shows whether it still runs.")
    return job
