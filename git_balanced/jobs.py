"""Jobs: one attempt at one piece. Their events, and the views the engine and the board take of them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from git_balanced.git import Repo
from git_balanced.state import cache, refs
from git_balanced.state.events import new_id

LIVE = ("queued", "running", "paused", "finished", "checking")
DONE = ("landed", "failed", "stopped", "lost", "retried", "held")


@dataclass(frozen=True)
class Job:
    id: str
    state: str
    f: dict[str, Any]
    created: float
    updated: float

    @property
    def piece(self) -> str:
        return str(self.f.get("piece", ""))

    @property
    def plan(self) -> str:
        return str(self.f.get("plan", ""))

    @property
    def attempt(self) -> int:
        return int(self.f.get("attempt", 1))

    @property
    def machine(self) -> str:
        return str(self.f.get("machine", "local"))

    @property
    def branch(self) -> str:
        return str(self.f.get("branch", ""))

    @property
    def runner_key(self) -> str:
        run = int(self.f.get("run_no", 1))
        return self.id if run == 1 else f"{self.id}-r{run}"

    @property
    def dismissed(self) -> bool:
        return bool(self.f.get("dismissed"))


def all_jobs(repo: Repo) -> dict[str, Job]:
    """Every job, folded (one ref listing; the cache folds only what changed)."""
    out = {}
    for jid, st in cache.read_all(repo, "jobs").items():
        out[jid] = Job(jid, st["state"] or "queued", st["fields"], st["created"] or 0.0, st["updated"] or 0.0)
    return out


def one(repo: Repo, job_id: str) -> Job | None:
    st = cache.read_one(repo, "jobs", job_id)
    if st is None:
        return None
    return Job(job_id, st["state"] or "queued", st["fields"], st["created"] or 0.0, st["updated"] or 0.0)


def event(repo: Repo, job_id: str, name: str, subject: str, data: dict[str, Any] | None = None,
          state: str | None = None) -> None:
    """Record one event on a job's chain."""
    refs.append(repo, refs.ref_for("jobs", job_id), name, subject, data or {}, state=state)


def place(repo: Repo, fields: dict[str, Any]) -> str:
    """Create a job (queued) and return its id; the event comes before any effect."""
    jid = new_id()
    fields = {**fields, "job": jid, "placed_at": time.time(), "run_no": 1}
    subject = f"{fields.get('piece')}: placed on {fields.get('machine')} (attempt {fields.get('attempt', 1)})"
    event(repo, jid, "placed", subject, fields, state="queued")
    return jid


def latest_by_piece(jobs: dict[str, Job]) -> dict[tuple[str, str], Job]:
    """The newest attempt of each (plan, piece)."""
    out: dict[tuple[str, str], Job] = {}
    for j in jobs.values():
        key = (j.plan, j.piece)
        cur = out.get(key)
        if cur is None or (j.attempt, j.created, j.id) > (cur.attempt, cur.created, cur.id):
            out[key] = j
    return out


def resolve(jobs: dict[str, Job], name: str) -> Job | None:
    """A job by id, unique id prefix, or branch name (the newest attempt on it)."""
    if name in jobs:
        return jobs[name]
    hits = [j for j in jobs.values() if j.id.startswith(name)]
    if len(hits) == 1:
        return hits[0]
    on_branch = [j for j in jobs.values() if j.branch == name.removeprefix("refs/heads/")]
    return max(on_branch, key=lambda j: (j.attempt, j.created)) if on_branch else None
