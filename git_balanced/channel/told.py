"""An event on a job that the lead hears of, written so that a crash between the two loses neither: the inbox
line first, keyed by the job, its chain's tip before the event and the event's name, then the event. A pass
that runs again after a crash decides the same event from the same tip, finds its line by that key, and posts
nothing twice."""

from __future__ import annotations

from typing import Any

from git_balanced.channel import inbox
from git_balanced.faults import crashpoint
from git_balanced.git import Repo
from git_balanced.job_events import JobEvent, record
from git_balanced.state import refs


def key_of(repo: Repo, job_id: str, name: str) -> str:
    """The key of a line told of the job under `name` (an event's, `ev.event_name()`): the same for a redo from
    the same tip of the job's chain, and only then."""
    tip = repo.read_ref(refs.ref_for("jobs", job_id)) or "new"
    return f"{name}:{job_id}:{tip}"


def tell_and_record(repo: Repo, lead_branch: str, job_id: str, ev: JobEvent, subject: str, text: str,
                    **data: Any) -> None:
    """Tell the lead `text` (once, however often a crash makes this run again), then record `ev` on the job."""
    inbox.post(repo, lead_branch, text, key=key_of(repo, job_id, ev.event_name()), again=True, **data)
    crashpoint("told-before-recorded")
    record(repo, job_id, ev, subject)
