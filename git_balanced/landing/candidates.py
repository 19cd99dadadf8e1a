"""A finished job as a landing candidate, and the verdicts of the queue recorded on the jobs."""

from __future__ import annotations

from dataclasses import replace

from git_balanced.channel.inbox import post
from git_balanced.faults import crashpoint
from git_balanced.jobs import Job
from git_balanced.landing.queue import Candidate, Verdict
from git_balanced.lead import Lead
from git_balanced.state import notes, refs
from git_balanced.vocab import JobState


def job_candidate(lead: Lead, job: Job) -> Candidate | None:
    """A finished job's branch as a candidate (its fetched copy when it ran on another machine)."""
    branch = job.branch or job.id
    tip = lead.repo.read_ref(job.fetched_ref or f"refs/heads/{job.branch}") or job.head
    if not tip:
        return None
    return Candidate(branch=branch, tip=tip, job=job.id, info=job.as_fields())


def record(lead: Lead, verdicts: list[Verdict]) -> None:
    """Each verdict as an event on its job, and as words in the lead's inbox."""
    repo = lead.repo
    for v in verdicts:
        landed_as = _landed_unrecorded(lead, v)
        if landed_as:  # killed after the move, before this: what the lead hears is the landing, once
            v = replace(v, status="landed", commit=landed_as)
        short = (v.commit or "")[:7]
        if v.status == "landed":
            text = f"Its check passed, so {v.branch} landed in {lead.branch} as {short}"
            state, event = JobState.LANDED, "landed"
        elif v.status == "already":
            text = f"{v.branch} is in {lead.branch} already"
            state, event = JobState.LANDED, "landed"
        elif v.status == "held":
            text = f"{v.branch} is held for you: {v.reason}"
            state, event = JobState.HELD, "held"
        elif v.status == "in_the_way":  # it stays finished, and lands once the files are out of the way
            text = f"{v.branch} waits: {v.reason}"
            state, event = None, "in-the-way"
        else:
            text = f"{v.branch} did not land: {v.reason}"
            state, event = JobState.FAILED, v.status
        if v.status == "landed" and v.job:
            # The line before the event: a crash between them leaves the job finished, so the next landing redoes
            # this one (as `already`, recovered above) and finds the line by its key rather than losing it.
            post(repo, lead.branch, text, kind=event, job=v.job, branch=v.branch, key=f"landed:{v.job}:{v.commit}",
                 again=bool(landed_as))
            crashpoint("after-told")
            refs.append(repo, refs.ref_for("jobs", v.job), event, f"{v.branch}: {text}",
                        {"landed": v.commit, "landed_in": lead.branch}, state=state)
            continue
        if v.job:
            data = {"landed": v.commit, "landed_in": lead.branch} if state == JobState.LANDED else \
                {"failure": v.status, "reason": v.reason, "tail": v.tail[-2000:], "verdict_paths": v.paths,
                   **({"check_tree": v.tree} if v.tree else {})}
            if state is None:
                data = {"in_the_way": v.paths, "in_the_way_why": v.reason}
            refs.append(repo, refs.ref_for("jobs", v.job), event, f"{v.branch}: {text}", data, state=state)
        post(repo, lead.branch, text, kind=event, job=v.job, branch=v.branch)


def _landed_unrecorded(lead: Lead, v: Verdict) -> str | None:
    """The merge that landed `v`'s job when the queue finds it `already` in: a landing that moved the branch,
    then was killed before its job heard of it (its landing note names the job)."""
    if v.status != "already" or not v.job or not v.commit:
        return None
    for landing in notes.landings(lead.repo, v.commit, most=200):  # a redo follows its crash closely
        if any(r.get("job") == v.job for r in landing.records):
            return landing.commit
    return None
