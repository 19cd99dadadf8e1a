"""A plan's budget covers its lead's turns as well as its workers' runs. A worker starts with its piece's share of
what the plan has left after its lead's spend; once the lead and the workers have spent the whole budget, the
plan's running workers are stopped, its waiting pieces do not start, and none of them is tried again."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from git_balanced import jobs as J
from git_balanced.channel.presence import headless_record
from git_balanced.engine.context import Context
from git_balanced.errors import BalancedError
from git_balanced.job_events import Failed, GaveUp
from git_balanced.jobs import Job, StoredPlan
from git_balanced.lead import Lead
from git_balanced.vocab import AT_WORK, ENDED_BADLY, Failure, JobState

GO_ON = ("store the pieces still to do as a new plan with a budget of its own: "
         "`git balanced plan FILE --budget USD --start` (the plan tool's `budget`)")

# Ends a running worker's runner (workers.stop): handed in, as the workers start with what start_budget says.
Stop = Callable[[Lead, Job], Any]


def spent(j: Job) -> float:
    """What the job's runs cost so far (its cost counts the runs before a pause too)."""
    return j.cost_usd if j.cost_usd is not None else j.spent_before


def lead_spent(lead: Lead, plan_id: str) -> float:
    """What the headless lead's turns spent on the plan (their shares, `plan_cost` in its record); 0 without one."""
    shares = (headless_record(lead.repo, lead.branch) or {}).get("plan_cost") or {}
    return round(float(shares.get(plan_id) or 0), 6)


def workers_spent(plan_id: str, jobs: Collection[Job]) -> float:
    """What the plan's workers spent, every attempt and run (as the board counts it)."""
    return round(sum(spent(j) for j in jobs if j.plan == plan_id), 6)


def start_budget(lead: Lead, job: Job, others: Collection[Job]) -> float | None:
    """The budget a job's worker starts with: what is left of its piece's share, scaled by what the plan has
    left after its lead's spend (share_left × (B − lead) / B), and never more than the plan has left at all.
    `others` are the plan's jobs; without a budget for the plan or the job, the share is as it was."""
    budget = job.budget_usd
    if budget is None:  # nothing to scale: the plan is not read at all (a start is a hot path)
        return None
    if job.spent_before:  # a run after a pause gets what is left
        budget = max(0.0, budget - job.spent_before)
    plan = J.one_plan(lead.repo, job.plan)
    total = plan.budget_usd if plan else None
    if not total:
        return budget
    own = lead_spent(lead, job.plan)
    jobs = {**{j.id: j for j in others}, job.id: job}.values()
    left = total - own - workers_spent(job.plan, jobs)
    return round(max(0.0, min(budget * (total - own) / total, left)), 4)


def used_up(lead: Lead, plan: StoredPlan, jobs: Collection[Job]) -> bool:
    """Whether the plan's budget is spent: its lead's spend and its workers' reach it."""
    return bool(plan.budget_usd) and \
        round(lead_spent(lead, plan.id) + workers_spent(plan.id, jobs), 6) >= float(plan.budget_usd or 0)


def spent_figures(lead: Lead, plan: StoredPlan, jobs: Collection[Job]) -> str:
    """"its budget of $1.00: its lead $0.40, its workers $0.60": the words for a plan whose budget is spent."""
    return (f"its budget of ${float(plan.budget_usd or 0):.2f}: its lead ${lead_spent(lead, plan.id):.2f}, "
            f"its workers ${workers_spent(plan.id, jobs):.2f}")


def refuse_if_spent(lead: Lead, job: Job, jobs: Collection[Job]) -> None:
    """A new attempt of a piece whose plan spent its budget would spend more than was given: refused, with the
    way to go on."""
    plan = J.one_plan(lead.repo, job.plan) if job.plan else None
    if plan is not None and used_up(lead, plan, jobs):
        figures = spent_figures(lead, plan, jobs)
        raise BalancedError(f"{job.piece} ({job.id}) is of plan {plan.id}, which spent {figures}; another "
                            "attempt would spend more than the plan was given.", hint=f"To go on, {GO_ON}.")


def stop_spent(ctx: Context, plans: Mapping[str, StoredPlan], jobs: Collection[Job], mine: Callable[[Job], bool],
               stop: Stop) -> set[str]:
    """Once a pass: for each plan whose budget is spent, stop this engine's running workers of it, end its
    waiting ones and those that failed, none tried again, and tell the lead once per plan what was stopped and
    how to go on. Returns the plans whose budget is spent (no piece of theirs starts this pass)."""
    out: set[str] = set()
    # A plan that is not started and has nothing left to end is not looked at: most of a lead's plans are done.
    open_ = {j.plan for j in jobs if j.state in AT_WORK or
             (j.state in ENDED_BADLY and not j.decided)}
    for pid, plan in sorted(plans.items()):
        if (plan.state != "started" and pid not in open_) or not used_up(ctx.lead, plan, jobs):
            continue
        out.add(pid)
        figures = spent_figures(ctx.lead, plan, jobs)
        ended: list[str] = []
        for j in sorted((j for j in jobs if j.plan == pid and mine(j)), key=lambda x: x.piece):
            how = _end(ctx, j, f"its plan spent {figures}", stop)
            if how:
                ended.append(f"{j.piece} ({how})")
        if ended:
            ctx.say(f"Plan {pid} spent {figures}. Stopped, and not tried again: {', '.join(ended)}. To go on, "
                    f"{GO_ON}.", plan=pid)
    return out


def _end(ctx: Context, j: Job, reason: str, stop: Stop) -> str:
    """End one job of a plan whose budget is spent (recorded before its runner is stopped): how, or "" when it
    had ended already."""
    final = f"Not tried again: {GO_ON}"
    if j.state == JobState.RUNNING:
        ctx.record(j.id, Failed(failure=Failure.BUDGET, reason=reason, ended=JobState.STOPPED, event="stopped",
                                decided=True, budget_stopped=True, final=final),
                   f"{j.piece}: stopped, as its plan's budget is spent")
        try:
            stop(ctx.lead, j)
        except BalancedError as exc:  # out of reach: recorded as stopped all the same, and the lead is told
            return f"it was running, and {j.machine} could not be told to stop it, so it may run on: {exc.message}"
        return "it was running"
    if j.state in (JobState.QUEUED, JobState.PAUSED):
        ctx.record(j.id, Failed(failure=Failure.BUDGET, reason=reason, event="failed", decided=True,
                                budget_stopped=True, final=final),
                   f"{j.piece}: ended before it ran, as its plan's budget is spent")
        return "it had not started" if j.state == JobState.QUEUED else "it was paused"
    if j.state in ENDED_BADLY and not j.decided:  # it would be tried again: that spends more than was given
        ctx.record(j.id, GaveUp(final=final), f"{j.piece}: not tried again, as its plan's budget is spent")
        return "it failed"
    return ""
