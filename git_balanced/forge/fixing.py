"""Sending a pull request's trouble to the session that made it, and what comes back.

The headless lead's session hears it in its inbox when a headless lead runs on the branch; otherwise a worker
is started on the lead's branch with the lead's agent, fenced like any worker, its one piece the message. Either
way the message says: fix it, commit, do not push. When the fix is on the lead's branch (the worker's commit
landed, or the lead's session ended its turn with new commits), a `Ready to push` row waits under Now; `ship`
on it pushes and updates the pull request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from git_balanced.channel import inbox, now, presence
from git_balanced.forge.base import PullRequest
from git_balanced.forge.events import Fixed, ToYou, record
from git_balanced.forge.prs import Pr
from git_balanced.jobs import one_plan, unused_branch, used_branches
from git_balanced.jobs import place as place_job
from git_balanced.landing.review import run_check
from git_balanced.lead import Lead
from git_balanced.state import cache, refs
from git_balanced.state.events import new_id, node_id
from git_balanced.vocab import ENDED_BADLY, JobState, LeadState, Trouble

if TYPE_CHECKING:
    from git_balanced.settings import Settings

NO_PUSH = "Fix it on this branch and commit. Do not push: the person ships the fix (`git balanced ship`)."


def message(pr: PullRequest, trouble: Trouble, said: str) -> str:
    """The one message its session gets: what is wrong, the failing part, and fix it, commit, do not push."""
    what = {Trouble.CHECKS: f"its checks failed on {pr.head_sha[:7]}",
            Trouble.CHANGES: "a reviewer asked for changes",
            Trouble.CONFLICT: f"it conflicts with its base, {pr.base_ref}"}[trouble]
    return f"[balanced] Pull request #{pr.number} ({pr.url}): {what}.\n\n{said.strip()}\n\n{NO_PUSH}"


def lead_session_alive(lead: Lead) -> bool:
    """Whether a headless lead runs on the branch: its session made the work and gets the fix."""
    return presence.driver_alive(presence.headless_record(lead.repo, lead.branch))


def send(lead: Lead, settings: Settings, pr: PullRequest, trouble: Trouble, said: str, remote: str = "origin") -> str:
    """Send the trouble to its session; returns who got it: `lead`, or `plan ID` of the worker's plan."""
    base = _base_fetched(lead, pr, remote) if trouble == Trouble.CONFLICT else None
    if lead_session_alive(lead):
        if base:
            said = (f"{pr.base_ref} is at {base[:7]} and does not merge with {pr.head_ref}. Merge it: `git merge "
                    f"{base}`, resolve the conflicts, and commit the merge.")
        inbox.post(lead.repo, lead.branch, message(pr, trouble, said), kind="pr-fix", pr=pr.number,
                   trouble=str(trouble))
        return "lead"
    start, said = _merge_started(lead, pr, base, said) if base else (None, said)
    return _start_worker(lead, settings, pr, message(pr, trouble, said), start)


def _base_fetched(lead: Lead, pr: PullRequest, remote: str) -> str | None:
    """Fetch the base into the lead's repository, and say which commit it is; None when the fetch failed (the
    message then names the branch only)."""
    res = lead.repo.fetch(remote, [f"+refs/heads/{pr.base_ref}:refs/remotes/{remote}/{pr.base_ref}"],
                          fetch_head=False, timeout=120)
    return (lead.repo.rev_parse(f"refs/remotes/{remote}/{pr.base_ref}") or None) if res.ok else None


def _merge_started(lead: Lead, pr: PullRequest, base: str, said: str) -> tuple[str | None, str]:
    """The merge of the base into the lead's branch made here, its conflicts left in as git writes them: the
    worker's branch starts there, so the base's commits go with it to any machine (a worker elsewhere has only
    what its branch carries). The commit and the worker's words; (None, `said`) when the branch has no tip."""
    tip = lead.repo.rev_parse(lead.ref)
    if not tip:
        return None, said
    merged = lead.repo.merge_tree(tip, base)
    left = ", ".join(merged.conflicts) or "no file"
    start = lead.repo.commit_tree(merged.tree, [tip, base], f"Merge {pr.base_ref} ({base[:7]}) into {pr.head_ref}"
                                  + ("" if merged.clean else f"\n\nConflicts left to resolve: {left}."))
    if merged.clean:
        return start, (f"{pr.base_ref} is at {base[:7]} and did not merge with {pr.head_ref} on the forge; this "
                       f"branch starts at that merge, made here without a conflict ({start[:7]}): check it, fix "
                       "what it broke, and commit.")
    return start, (f"{pr.base_ref} is at {base[:7]} and does not merge with {pr.head_ref}. This branch starts at "
                   f"that merge ({start[:7]}), with the conflicts left in as git marks them (<<<<<<<): resolve "
                   f"them in {left}, and commit.")


def _start_worker(lead: Lead, settings: Settings, pr: PullRequest, text: str, start: str | None = None) -> str:
    """A plan of one piece on the lead's branch, on the lead's agent, started: its job lands the fix on the
    lead's branch as any worker's does; its branch starts at `start` when given (as an earlier attempt's
    would). Returns the plan's id (its one job's id follows once placed)."""
    from git_balanced.machines.placing.where import Want, place

    agent = settings.balanced.agent
    where = place(lead, [Want(agent, None)], reserve=settings.balanced.reserve).each[0]
    plan_id = new_id()
    piece_id = f"fix-pr-{pr.number}"
    piece = {"id": piece_id, "task": text, "size": 1.0, "after": [], "machine": None, "agent": agent,
             "model": settings.balanced.model, "run": settings.pr.run if agent == "shell" else None, "paths": [],
             "plan_first": False, "budget_usd": None, "placed": where.machine, "why": where.why, "after_words": "",
             "branch": unused_branch(f"balanced/{piece_id}", used_branches(lead.repo), plan_id[-6:])}
    data = {"id": plan_id, "task": f"Fix pull request #{pr.number}", "budget_usd": None, "lead": lead.branch,
            "pieces": [piece], "source": f"pull request #{pr.number}", "pr": pr.number}
    ref = refs.ref_for("plans", plan_id)
    refs.append(lead.repo, ref, "created", f"Plan: fix pull request #{pr.number} (1 piece)", data, state="created")
    if start:
        _place_at(lead, plan_id, start)
    refs.append(lead.repo, ref, "started", f"Plan started: fix pull request #{pr.number}",
                {"started_by": "pull request", "node": node_id(lead.repo)}, state="started")
    lead.wake_engine()
    return f"plan {plan_id}"


def _place_at(lead: Lead, plan_id: str, start: str) -> None:
    """Place the plan's one job as the engine would, but on `start` (the merge made here) rather than the
    lead's tip: its branch starts there, here or on the machine it goes to (the commit is pushed there as any
    job's base is). Placed before the plan is started, so the engine finds it placed already."""
    plan = one_plan(lead.repo, plan_id)
    assert plan is not None and len(plan.pieces) == 1
    piece = plan.pieces[0]
    place_job(lead.repo, {"plan": plan_id, "plan_task": plan.task, "piece": piece.id, "task": piece.task,
                          "title": piece.task.splitlines()[0][:80], **piece.options(), "machine": piece.placed,
                          "why": piece.why, "branch": piece.branch, "base": start, "attempt": 1,
                          "lead": lead.branch, "after": []})


def follow(lead: Lead, p: Pr) -> None:
    """A pull request whose trouble was sent: once its session's fix is on the lead's branch, put it under Now
    as `Ready to push`; a worker that ended without one hands the trouble to you."""
    sent = p.newest("sent")
    if sent is None or p.last != "sent":
        return
    to = str(sent.data.get("to") or "")
    head = str(sent.data.get("head_sha") or "")
    if to == "lead":
        rec = presence.headless_record(lead.repo, lead.branch) or {}
        if rec.get("state") in (LeadState.IN_A_TURN, LeadState.STARTING):
            return
    else:
        job = plan_job(lead, to.removeprefix("plan "))
        if job is None or job[1] not in (JobState.LANDED, *ENDED_BADLY):
            return
        if job[1] != JobState.LANDED:
            record(lead.repo, p.number, ToYou(trouble=Trouble(sent.data["trouble"]), head_sha=head,
                                              why=f"its session ended without a fix (job {job[0]}: {job[1]})"),
                   f"Pull request #{p.number}: its session ended without a fix")
            return
    tip = lead.repo.rev_parse(lead.ref) or ""
    if not head or tip == head or lead.repo.count_commits(head, lead.branch) == 0:
        return
    _ready(lead, p, sent.data, head, tip)


def _ready(lead: Lead, p: Pr, sent: dict[str, Any], head: str, tip: str) -> None:
    files = ins = dels = 0
    for added, removed, _ in lead.repo.numstat(head, lead.branch):
        files, ins, dels = files + 1, ins + (added or 0), dels + (removed or 0)
    commits = lead.repo.count_commits(head, lead.branch)
    ships = {"summary": f"{commits} commit{'s' if commits != 1 else ''} · {files} file{'s' if files != 1 else ''} "
                        f"· +{ins} \u2212{dels}", "commits": commits, "files": files, "insertions": ins,
             "deletions": dels, "upstream": f"pull request #{p.number}"}
    trouble = str(sent.get("trouble") or "")
    row = now.put_fix(lead, f"#{p.number} {trouble}, fixed by its session ({tip[:7]})", pr=p.number,
                      trouble=trouble, commit=tip, ships=ships, check=run_check(lead))
    record(lead.repo, p.number, Fixed(commit=tip, row=row["id"]),
           f"Pull request #{p.number}: fixed by its session, ready to push ({row['id']})")


def plan_job(lead: Lead, plan_id: str) -> tuple[str, str] | None:
    """The newest job of the fix plan `plan_id` (its id and state), or None while none was placed: read as the
    board reads jobs (state/cache.read_live), the done ones as their briefs, no chain read in full."""
    found = [(int(st["fields"].get("attempt") or 1), name, str(st["state"]))
             for name, st in cache.read_live(lead.repo, "jobs").items() if st["fields"].get("plan") == plan_id]
    return max(found)[1:] if found else None
