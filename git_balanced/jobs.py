"""Jobs: one attempt at one piece. Their events, and the views the engine and the board take of them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from git_balanced.errors import BalancedError
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


def newest_on(jobs: dict[str, Job], branch: str, states: tuple[str, ...] | None = None) -> Job | None:
    """The newest attempt on `branch` (or `refs/heads/<branch>`), among the jobs in `states` when given."""
    branch = branch.removeprefix("refs/heads/")
    on_branch = [j for j in jobs.values() if j.branch == branch and (states is None or j.state in states)]
    return max(on_branch, key=lambda j: (j.attempt, j.created)) if on_branch else None


def resolve(jobs: dict[str, Job], name: str) -> Job:
    """A job by id, by branch (the newest attempt on it) or by a unique prefix of its id; an unknown name, or
    one that several ids start with, is refused, naming the candidates."""
    return jobs.get(name) or newest_on(jobs, name) or by_prefix(jobs, name)


def by_prefix(jobs: dict[str, Job], name: str, *, or_branch: bool = False) -> Job:
    """The one job whose id starts with `name`; refused when none does or more than one does. `or_branch`:
    the name could have been a branch too, and the refusal says so."""
    hits = sorted((j for j in jobs.values() if name and j.id.startswith(name)), key=lambda j: j.id)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        what, where = ("job or local branch", " and `git branch` for branches") if or_branch else ("job", "")
        raise BalancedError(f"There is no {what} named {name!r}.",
                            hint=f"see `git balanced board --json` for job ids{where}.")
    shown = ", ".join(f"{j.id} ({j.piece}, {j.state})" for j in hits[:10]) + (", ..." if len(hits) > 10 else "")
    raise BalancedError(f"{name!r} is the start of {len(hits)} job ids: {shown}.",
                        hint="give more of the id, enough to name one job.")
