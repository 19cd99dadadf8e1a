"""One job in full, for `git balanced show JOB` and the lead's `show` tool: what its piece is, what its worker
did, where its branch is, each event on its chain, and the whole output of the check that failed on it (kept by
landing/checks.keep_log; the board and the inbox show only its end)."""

from __future__ import annotations

from typing import Any

from git_balanced import handles
from git_balanced import jobs as J
from git_balanced.engine.board import check_tail, job_row
from git_balanced.errors import BalancedError
from git_balanced.jobs import Job
from git_balanced.landing import checks
from git_balanced.lead import Lead
from git_balanced.state import archive, archive_branches, refs

EVENTS_SHOWN = 200  # a job's chain is short; a very long one (many questions) shows its newest


def detail(lead: Lead, name: str) -> dict[str, Any]:
    """JOB (an id, a unique prefix of one, or its branch) in full."""
    repo = lead.repo
    more: dict[str, Any] = {}
    everyone = J.all_jobs(repo)
    try:
        job = J.resolve(everyone, name, repo, lead.branch)
    except BalancedError:
        found = archive.find_job(repo, name)  # a job of a plan folded away by `gc`: its archive has it whole
        if found is None:
            raise
        job = Job.of(found[0], found[1])
        events = [{k: row.get(k) for k in ("time", "event", "state", "subject")} for row in found[2][-EVENTS_SHOWN:]]
        handle = None  # a handle lives as long as its plan; an archived plan's are gone
        more = {"archived": archive.archive_ref(job.plan), "branches_removed": _removed(lead, job)}
    else:
        events = _events(lead, job)
        handle = handles.handles(repo, everyone, lead.branch).get(job.id)
    return {**job_row(job), "handle": handle, "task": job.task, "run": job.run, "paths": list(job.paths),
            "why": job.why,
            "previous": job.previous, "next": job.next, "retry_reason": job.retry_reason,
            "failure": job.failure, "final": job.final, "did": _did(job), "branch_at": _branch_at(lead, job),
            "events": events, "check_output": _check_output(lead, job), **more}


def _did(j: Job) -> dict[str, Any]:
    """What its worker did, as its run's result said."""
    return {"exit_code": j.exit_code, "outcome": j.outcome, "summary": j.summary, "commits": j.commits,
            "head": j.head, "seconds": j.seconds, "cost_usd": j.cost_usd, "worktree": j.worktree or None}


def _branch_at(lead: Lead, j: Job) -> dict[str, Any]:
    """Where its branch is here: the commit it names, and whether that is in the lead's branch."""
    ref = j.fetched_ref or (f"refs/heads/{j.branch}" if j.branch else "")
    tip = lead.repo.read_ref(ref) if ref else None
    lead_tip = lead.repo.read_ref(lead.ref)
    return {"ref": ref or None, "commit": tip,
            "in_lead": bool(tip and lead_tip and lead.repo.is_ancestor(tip, lead_tip))}


def _removed(lead: Lead, j: Job) -> list[dict[str, Any]]:
    """The refs of an archived job that its plan's archive removed (archive_branches.BRANCHES_FILE): each with
    the commit it was at, whether it is here again, and the command that brings it back."""
    repo = lead.repo
    return [{"ref": r["ref"], "sha": r["sha"], "here": repo.read_ref(r["ref"]) is not None,
             "restore": archive_branches.restore_command(r["ref"], r["sha"])}
            for r in archive.removed_rows(repo, j.plan) if r.get("job") == j.id]


def _events(lead: Lead, j: Job) -> list[dict[str, Any]]:
    """Each event on the job's chain, oldest first: when, its name, the state it moved to, and its line."""
    found = refs.events_of(lead.repo, refs.ref_for("jobs", j.id))[-EVENTS_SHOWN:]
    return [{"time": ev.time, "event": ev.event, "state": ev.state, "subject": _subject(lead, ev.sha)}
            for ev in found]


def _subject(lead: Lead, sha: str) -> str:
    """The subject of an event's commit, as `git log --format=%s` gives it (its first paragraph on one line),
    from the object the chain's read already loaded, rather than one git process per event."""
    message = lead.repo.store[sha.encode()].message.decode("utf-8", "replace")
    return " ".join(message.strip().split("\n\n", 1)[0].splitlines())


def _check_output(lead: Lead, j: Job) -> dict[str, Any] | None:
    """The whole output of the check that failed on it, where this clone kept it; else the end its job holds."""
    tail = check_tail(j, checks.TAIL_LINES)
    if not tail:
        return None
    tree = j.check_tree
    whole = checks.kept_log(lead.repo, tree) if tree else None
    return {"tree": tree or None, "whole": whole is not None, "text": whole if whole is not None else tail}
