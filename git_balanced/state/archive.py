"""The archive of done work: plans whose jobs are all done, and older than a setting, folded into one commit per
plan under `refs/balanced/archive/<plan>`, and their refs removed, so neither the refs nor the cost of reading
them grows with history.

An archive commit's tree holds `plan.jsonl` (the plan's events, when its ref was archived) and `jobs.jsonl`
(every job's events, each line naming its job), one event a line with its commit's id and subject: two blobs a
plan (state/archived.py reads them, and the layout before, a blob a job); its parent is the plan's archive
before, so `git log refs/balanced/archive/<plan>` reads what was archived when. The refs are removed only after
the archive holding every one of their events was written and read back, in one transaction, each only while it
still points where it did: a kill between the two leaves both (readers take the ref), and the next run finishes.
The branches the plan's landed jobs left in the lead, merged into it, go in the same transaction, each recorded
in the archive with the id it pointed at (state/archive_branches.py says which, and which stay).
The inbox is folded the same way: `refs/balanced/archive/inbox/<branch>` names its newest message older than the
setting, and a reader of the inbox reads only what came after it (`git log` reads all).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead, settings_at
from git_balanced.state import archive_branches, cache
from git_balanced.state.archived import (
    ARCHIVE,
    INBOX_MARKS,
    JOBS_DIR,
    JOBS_FILE,
    PLAN_FILE,
    archive_ref,
    archived_lines,
    as_events,
    find_job,
    inbox_mark,
    job_lines,
    jobs_of,
    top_of,
)
from git_balanced.state.events import MODE_FILE, read_event
from git_balanced.state.refs import read_chain
from git_balanced.vocab import DONE

__all__ = ["ARCHIVE", "INBOX_MARKS", "archive_ref", "archived_lines", "as_events", "find_job", "fold_away", "gc",
           "inbox_mark", "when_idle"]
FINAL_PLAN = ("done", "cancelled")
DAY = 86400.0


@dataclass
class Folded:
    """What one run of `gc` folded away: by plan, the jobs archived; the refs removed; what was left, and why."""

    plans: dict[str, list[str]] = field(default_factory=dict)
    removed: int = 0
    kept: list[str] = field(default_factory=list)  # refs that moved while archiving: the next run takes them
    inbox: dict[str, str] = field(default_factory=dict)  # lead branch -> its newest message folded away
    left: int = 0  # plans to fold that a bounded run (`most`) left for the next
    branches: dict[str, str] = field(default_factory=dict)  # landed jobs' branches removed: ref -> the id it was at
    plan_branches: dict[str, list[str]] = field(default_factory=dict)  # by plan, the branches listed in its archive
    branches_kept: list[dict[str, str]] = field(default_factory=list)  # landed jobs' branches left: {branch, job, why}

    def jobs(self) -> int:
        return sum(len(v) for v in self.plans.values())


def candidates(repo: Repo, cutoff: float, jobs: dict[str, dict[str, Any]] | None = None,
               ) -> dict[str, tuple[str | None, dict[str, str]]]:
    """The plans to fold, each with its ref's tip (None when it has no ref any more) and its jobs' tips: a plan
    done (or cancelled) before `cutoff` whose jobs all ended before it (a job whose plan is gone counts alone).
    `jobs`: every job's state, when read already."""
    plan_tips = repo.list_refs("refs/balanced/plans/")
    job_tips = repo.list_refs("refs/balanced/jobs/")
    plans = cache.read_all(repo, "plans")
    jobs = cache.read_all(repo, "jobs") if jobs is None else jobs
    by_plan: dict[str, dict[str, str]] = {}
    ready: dict[str, bool] = {}
    for jid, st in jobs.items():
        pid = str(st["fields"].get("plan") or "")
        tip = job_tips.get(f"refs/balanced/jobs/{jid}")
        if not pid or tip is None:
            continue
        by_plan.setdefault(pid, {})[jid] = tip
        old = st["state"] in DONE and float(st["updated"] or 0) < cutoff
        ready[pid] = ready.get(pid, True) and old
    out: dict[str, tuple[str | None, dict[str, str]]] = {}
    for pid in set(by_plan) | set(plans):
        plan = plans.get(pid)
        if plan is not None and not (plan["state"] in FINAL_PLAN and float(plan["updated"] or 0) < cutoff):
            continue
        if not ready.get(pid, True):
            continue
        tip = plan_tips.get(f"refs/balanced/plans/{pid}") if plan is not None else None
        out[pid] = (tip, by_plan.get(pid, {}))
    return out


def _rows(repo: Repo, tip: str) -> list[dict[str, Any]]:
    """A chain's events as archived lines (each its commit, subject and event), oldest first."""
    rows = []
    for ev in read_chain(repo, tip):
        message = repo.store[ev.sha.encode()].message.decode("utf-8", "replace")
        subject = " ".join(message.strip().split("\n\n", 1)[0].splitlines())
        rows.append(dict(sorted({"sha": ev.sha, "subject": subject, **json.loads(ev.to_json())}.items())))
    return rows


def _write(repo: Repo, pid: str, plan_tip: str | None, job_tips: dict[str, str],
           branches: dict[str, tuple[str, str]] | None = None) -> tuple[str, dict[str, set[str]]]:
    """The plan's archive commit holding these chains on top of what it held (every job's lines in one blob,
    JOBS_FILE; an older archive's `jobs/` moved into it), and the `branches` to remove ({ref: (id, job)}, in
    archive_branches.BRANCHES_FILE); and each chain's event commits."""
    ref = archive_ref(pid)
    before = repo.read_ref(ref)
    top = top_of(repo, before)
    held = jobs_of(repo, top)
    wrote: dict[str, set[str]] = {}
    lines = []
    for jid, tip in sorted(job_tips.items()):
        held[jid] = rows = _rows(repo, tip)
        wrote[f"refs/balanced/jobs/{jid}"] = {row["sha"] for row in rows}
        lines.append(f"{jid}  {rows[-1].get('subject', '') if rows else ''}")
    if plan_tip:
        rows = _rows(repo, plan_tip)
        data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        top[PLAN_FILE.encode()] = (MODE_FILE, repo.write_blob(data).encode())
        wrote[f"refs/balanced/plans/{pid}"] = {row["sha"] for row in rows}
    top.pop(JOBS_DIR.encode(), None)
    data = b"".join(job_lines(held[jid], jid) for jid in sorted(held))
    top[JOBS_FILE.encode()] = (MODE_FILE, repo.write_blob(data).encode())
    if branches:
        old = top.get(archive_branches.BRANCHES_FILE.encode())
        data = archive_branches.lines(repo.store[old[1]].data if old else b"", branches)
        top[archive_branches.BRANCHES_FILE.encode()] = (MODE_FILE, repo.write_blob(data).encode())
        lines.append(f"Removed {len(branches)} merged branch{'es' if len(branches) != 1 else ''} "
                     f"(`git branch NAME ID` brings one back: `git show {ref}:{archive_branches.BRANCHES_FILE}`)")
    tree = repo.write_tree([(k.decode(), m, s.decode()) for k, (m, s) in sorted(top.items())])
    if before and repo.store[before.encode()].tree.decode() == tree:
        return before, wrote  # archived already, by a run killed before it removed the refs
    subject = f"Archived {len(job_tips)} jobs of plan {pid}" + (" and the plan" if plan_tip else "")
    commit = repo.write_commit(tree, [before] if before else [], subject + "\n\n" + "\n".join(lines) + "\n")
    if not repo.cas_ref(ref, commit, before, message="balanced: archived"):
        raise _Lost(ref)
    return commit, wrote


class _Lost(Exception):
    """Another writer moved an archive ref first: this plan waits for the next run."""


def removed_rows(repo: Repo, pid: str) -> list[dict[str, str]]:
    """The branches the plan's archive, read from its ref, lists as removed (archive_branches.BRANCHES_FILE): each
    row's ref, the commit it was at and its job."""
    got = top_of(repo, repo.read_ref(archive_ref(pid))).get(archive_branches.BRANCHES_FILE.encode())
    return archive_branches.parse(repo.store[got[1]].data) if got else []


def _branches_verified(repo: Repo, pid: str, branches: dict[str, tuple[str, str]]) -> bool:
    """Whether the plan's archive, read back from its ref, lists every branch to remove with the id it is at."""
    if not branches:
        return True
    rows = removed_rows(repo, pid)
    return {(r, sha) for r, (sha, _) in branches.items()} <= {(r.get("ref"), r.get("sha")) for r in rows}


def _verified(repo: Repo, pid: str, wrote: dict[str, set[str]]) -> bool:
    """Whether the plan's archive, read back from its ref, holds every event of every chain written."""
    held = jobs_of(repo, top_of(repo, repo.read_ref(archive_ref(pid))))
    for ref, shas in wrote.items():
        kind, name = ref.split("/")[2], ref.rsplit("/", 1)[1]
        found = held.get(name) if kind == "jobs" else archived_lines(repo, pid, None)
        if found is None or {row.get("sha") for row in found} != shas:
            return False
    return True


def fold_away(repo: Repo, older_than_days: float, now: float | None = None, most: int | None = None) -> Folded:
    """Archive every plan done longer ago than `older_than_days` (the `most` oldest, when given), with its jobs,
    then remove their refs at once; and fold each inbox's messages older than that."""
    cutoff = (time.time() if now is None else now) - older_than_days * DAY
    report = Folded()
    doomed: dict[str, str] = {}
    with repo.listing_once():
        jobs = cache.read_all(repo, "jobs")
        found = candidates(repo, cutoff, jobs)
    report.left = max(0, len(found) - most) if most is not None else 0
    folding = sorted(found.items())[:most]
    chosen = archive_branches.choose(repo, jobs, {j: pid for pid, (_, tips) in folding for j in tips})
    report.branches_kept = chosen.kept
    for pid, (plan_tip, job_tips) in folding:
        branches = chosen.gone.get(pid, {})
        try:
            _, wrote = _write(repo, pid, plan_tip, job_tips, branches)
        except _Lost:
            continue
        if not (_verified(repo, pid, wrote) and _branches_verified(repo, pid, branches)):
            continue
        report.plans[pid] = sorted(job_tips)
        doomed.update({f"refs/balanced/jobs/{j}": t for j, t in job_tips.items()})
        if plan_tip:
            doomed[f"refs/balanced/plans/{pid}"] = plan_tip
        doomed.update({ref: sha for ref, (sha, _) in branches.items()})
        report.plan_branches[pid] = sorted(branches)
    if doomed and not repo.delete_refs(doomed):
        # One of them moved meanwhile (a sync, a dismiss, a commit on a branch): the others go now; a chain that
        # moved at the next run, a branch that moved stays.
        still = {ref: tip for ref, tip in doomed.items() if repo.read_ref(ref) == tip}
        moved = sorted(set(doomed) - set(still))
        report.kept = [ref for ref in moved if ref.startswith("refs/balanced/")]
        report.branches_kept += [{"branch": ref, "job": "", "why": "it moved while it was archived"}
                                 for ref in moved if not ref.startswith("refs/balanced/")]
        doomed = still if repo.delete_refs(still) else {}
    report.branches = {ref: tip for ref, tip in doomed.items() if not ref.startswith("refs/balanced/")}
    report.removed = len(doomed) - len(report.branches)
    if doomed:  # their entries leave the cache now, not at the next reader: its files shrink with the refs
        for kind in ("jobs", "plans"):
            cache.read_all(repo, kind)
    report.inbox = _fold_inboxes(repo, cutoff)
    return report


def _fold_inboxes(repo: Repo, cutoff: float) -> dict[str, str]:
    """Move each inbox's mark to its newest message older than `cutoff` (first parents, from the tip)."""
    out = {}
    for ref, tip in repo.list_refs("refs/balanced/inbox/").items():
        name = ref.rsplit("/", 1)[1]
        mark_ref = INBOX_MARKS + name
        mark = repo.read_ref(mark_ref)
        found = _newest_before(repo, tip, cutoff, mark)
        if found and found != mark and repo.cas_ref(mark_ref, found, mark, message="balanced: inbox folded"):
            out[name] = found
    return out


def _newest_before(repo: Repo, tip: str, cutoff: float, stop: str | None) -> str | None:
    """The newest message on the first parents from `tip` said before `cutoff`, by the time its event records
    (a commit's own date is whatever its writer's environment gave it, GIT_COMMITTER_DATE included)."""
    for sha in _first_parents(repo, tip, stop):
        ev, _ = read_event(repo, sha)
        if ev is not None and ev.time < cutoff:
            return sha
    return None


def _first_parents(repo: Repo, tip: str, stop: str | None) -> Iterator[str]:
    sha: str | None = tip
    while sha and sha != stop:
        yield sha
        parents = repo.store[sha.encode()].parents
        sha = parents[0].decode() if parents else None


def gc(lead: Lead, older_than_days: float | None = None, most: int | None = None) -> dict[str, Any]:
    """`git balanced gc`: fold away what was done more than `older_than_days` ago (default: the setting
    `[balanced] archive_after_days`), as a JSON-ready dict."""
    if older_than_days is None:
        older_than_days = settings_at(lead.repo, lead.branch).balanced.archive_after_days
    if not 0 <= older_than_days <= 36500:
        raise BalancedError(f"--older-than {older_than_days:g} is not a number of days from 0 to 36,500.",
                            hint="`git balanced gc --older-than 30` folds away what was done more than 30 days ago.")
    done = fold_away(lead.repo, older_than_days, most=most)
    return {"older_than_days": older_than_days, "jobs": done.jobs(), "refs_removed": done.removed, "left": done.left,
            "plans": [{"plan": pid, "archive": archive_ref(pid), "jobs": jobs,
                       "branches": [ref for ref in done.plan_branches.get(pid, []) if ref in done.branches]}
                      for pid, jobs in done.plans.items()],
            "kept": done.kept, "inbox": [{"inbox": name, "folded_to": sha} for name, sha in done.inbox.items()],
            "branches_removed": len(done.branches), "branches_kept": done.branches_kept}


IDLE_EVERY = 6 * 3600.0  # an idle engine folds at most this often: what it finds grows by the day, not the pass
IDLE_MOST = 20  # plans an idle engine folds at once (a second or so), so that work stored meanwhile never waits long


def when_idle(lead: Lead) -> bool:
    """The engine's idle fold (engine/upkeep.Upkeep.idle): `gc` with the setting, IDLE_MOST plans at a time, again
    at each idle look while some are left, then not before IDLE_EVERY seconds (`.git/balanced/gc-idle`); said on
    stderr (engine.log) when it archived anything or could not run. Whether plans were left for the next look."""
    stamp = lead.repo.state_dir / "gc-idle"
    try:
        if time.time() - stamp.stat().st_mtime < IDLE_EVERY:
            return False
    except FileNotFoundError:
        pass
    try:
        done = gc(lead, most=IDLE_MOST)
    except (BalancedError, OSError) as exc:
        stamp.write_text(f"{time.time():.0f}\n")
        print(f"[balanced] gc (engine idle) did not run: {exc}; `git balanced gc` runs it by hand.",
              file=sys.stderr, flush=True)
        return False
    if not done["left"]:
        stamp.write_text(f"{time.time():.0f}\n")
    if done["jobs"] or done["refs_removed"] or done["inbox"]:
        print(f"[balanced] gc (engine idle): archived {done['jobs']} jobs of {len(done['plans'])} plans done more "
              f"than {done['older_than_days']:g} days ago into {ARCHIVE}, removed {done['refs_removed']} refs"
              f" and {done['branches_removed']} merged branches of landed jobs"
              f"{', folded ' + str(len(done['inbox'])) + ' inbox(es)' if done['inbox'] else ''}"
              f"{'; ' + str(done['left']) + ' plans left for the next idle pass' if done['left'] else ''}.",
              file=sys.stderr, flush=True)
    return bool(done["left"])
