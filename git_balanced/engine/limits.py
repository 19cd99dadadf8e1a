"""Plan usage limits in the engine (DESIGN §8): a worker refused for its plan's limit pauses until the reset
and goes on from what it did, or moves to another agent with room when the reset is far; an account past
the reserve takes no new workers. The engine calls these with its pass's Context; the windows live in
accounts.py."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

from git_balanced import jobs as J
from git_balanced.agents.base import Outcome
from git_balanced.engine import workers
from git_balanced.engine.attempts import Next, next_attempt
from git_balanced.engine.budget import spent
from git_balanced.engine.context import Context
from git_balanced.errors import BalancedError
from git_balanced.job_events import Moved, Noted, Paused, Resuming
from git_balanced.jobs import Job
from git_balanced.machines.placing import accounts
from git_balanced.machines.placing.accounts import agent_name
from git_balanced.machines.prepare import agents_probe
from git_balanced.state import refs
from git_balanced.ui import clock

RESUME_NOTE = ("You were paused by your plan's usage limit, which has reset. Carry on from what you committed "
               "and what is in the worktree; do not start over.")

# Brings a finished worker's branch back from its machine, recording where in the event's data.
FetchBack = Callable[[Job, dict[str, Any]], None]


def budget_left(j: Job) -> float | None:
    """The job's budget less what it spent, or None without a budget (a shell command spends nothing)."""
    if j.budget_usd is None or j.agent == "shell":
        return None
    return round(max(0.0, j.budget_usd - spent(j)), 4)


def pause(ctx: Context, j: Job, outcome: Outcome, data: dict[str, Any], fetch_back: FetchBack) -> None:
    """Pause a refused worker until its limit resets plus a minute, or move the piece if that is far."""
    now = time.time()
    known = outcome.reset_at is not None
    reset = float(outcome.reset_at) if outcome.reset_at is not None else now + accounts.unknown_reset()
    accounts.record(ctx.repo, j.agent, j.machine, [], limited_until=reset)
    if reset - now > accounts.MOVE_AFTER:
        other = accounts.other_agent(ctx.lead, ctx.settings, j.agent, j.machine)
        if other is not None:
            move(ctx, j, data, other, reset, fetch_back)
            return
    resume = max(reset, now) + accounts.resume_margin()
    if known:
        words = f"It pauses until the limit resets at {clock(reset)}"
    else:
        words = (f"{agent_name(j.agent)} does not say when the limit resets, so it pauses until {clock(reset)} "
                 "and tries again")
    ctx.record(j.id, Paused(ran=data, reset_at=reset, resume_at=resume, reset_known=known),
               f"{j.piece}: paused for its plan's usage limit until {clock(reset)}",
               say=f"{j.piece} reached its plan's usage limit. {words}", job=j.id)


def move(ctx: Context, j: Job, data: dict[str, Any], other: tuple[str, str], reset: float,
         fetch_back: FetchBack) -> None:
    """The piece goes on as a new worker of another agent, on the same branch, with what is left of its budget."""
    new_agent, machine = other
    words = f"{agent_name(j.agent)} can't take it: {agent_name(new_agent)} instead"
    left = budget_left(replace(j, cost_usd=data.get("cost_usd")))
    if j.machine != machine:
        fetch_back(j, data)  # what the first did, for the copy on the other machine
    # The same attempt, branch and base: it goes on from what the first agent did.
    new = next_attempt(ctx.lead, j, Next(retry_reason=words, same_attempt=True, agent=new_agent,
                                         model=ctx.default_model(new_agent), machine=machine,
                                         why=f"{machine}: {words}", budget_usd=left, moved_from=j.agent))
    ctx.record(j.id, Moved(ran=data, next=new, moved_to=new_agent, reason=words, reset_at=reset),
               f"{j.piece}: {words}",
               say=f"{j.piece} reached its plan's usage limit, which resets at {clock(reset)}. {words}, on {machine}",
               job=new)
    plan = J.one_plan(ctx.repo, j.plan)
    moves = {**(plan.moves if plan else {}), j.piece: f"{words}: its plan's usage limit resets at {clock(reset)}"}
    refs.append(ctx.repo, refs.ref_for("plans", j.plan), "moved", f"{j.piece}: {words}", {"moves": moves})


def resume(ctx: Context, paused: list[Job], jobs: Collection[Job]) -> bool:
    """Start the paused workers whose reset has passed, in their own worktrees, told to carry on; True when
    one was. `jobs` are the others, whose paths a worker's guard names."""
    resumed = False
    for j in paused:
        if time.time() < (j.resume_at or 0.0):
            continue
        ctx.record(j.id, Resuming(run_no=j.run_no + 1, resume_note=RESUME_NOTE, spent_before=spent(j)),
                   f"{j.piece}: carries on after its usage limit")
        fresh = J.one(ctx.repo, j.id)
        assert fresh is not None
        workers.start(ctx.lead, fresh, ctx.cmds.setup, ctx.cmds.check,
                      ctx.settings.balanced.workers_edit_without_asking, jobs)
        ctx.say(f"{j.piece}: its usage limit has reset, so it carries on", job=j.id)
        resumed = True
    return resumed


@dataclass(frozen=True)
class Go:
    """Whether a queued job starts now: `job` as it starts (its machine or agent may have changed), or None;
    `idle` when it waits for a machine that can run its agent (nothing happens until you act)."""

    job: Job | None
    idle: bool = False


def startable(ctx: Context, j: Job, named: str | None = None) -> Go:
    """A queued job as it may start now: on a machine that has its agent (moved to one that has it when its
    own does not), with room in its account (moved to another agent with room when it has none). `named` is
    the machine its plan names: such a piece never moves to another machine."""
    go = _on_a_machine_with_its_agent(ctx, j, named)
    if go.job is None:
        return go
    return _with_room(ctx, go.job)


def _lacks(j: Job) -> str:
    """Why the job's machine cannot run its agent, from what is known of it (asked when older than minutes)."""
    if not j.machine:
        return "no machine could take it when it was placed"
    if j.agent not in agents_probe.AGENTS:
        return ""
    from git_balanced.machines.inventory.records import box_of, host_alias

    try:
        if j.machine != "local" and box_of(j.machine) is None:
            host_alias(j.machine)
    except BalancedError:
        return f"{j.machine} is no longer added"
    facts = agents_probe.refresh([j.machine], [j.agent]).get(j.machine, {})
    return agents_probe.missing_words(j.agent, facts.get(j.agent))


def _on_a_machine_with_its_agent(ctx: Context, j: Job, named: str | None) -> Go:
    from git_balanced.machines.inventory.records import added, local_preference, ticked
    from git_balanced.machines.placing.seats import running_counts
    from git_balanced.machines.placing.where import Want, chosen_by_settings, place

    why = _lacks(j)
    if named:
        return Go(j) if not why else _waits(ctx, j, f"for {named}, the machine its plan names: {why}")
    pref = local_preference() if j.machine == "local" else added().get(j.machine, {}).get("preference")
    if not why and (j.machine in ticked(ctx.repo) and pref != "manual-only"
                    or chosen_by_settings(ctx.settings.balanced, j.machine)):
        return Go(j)
    everyone = J.all_jobs(ctx.repo).values()
    found = place(ctx.lead, [Want(j.agent)], reserve=ctx.settings.balanced.reserve,
                  running=running_counts(everyone)).one
    if found.waits:
        return _waits(ctx, j, found.why)
    if not why:
        why = "it is set to manual only" if pref == "manual-only" else "it is not ticked"
    before = f"{j.machine}: {why}" if j.machine else ""
    ctx.record(j.id, Noted(machine=found.machine, why=found.why, waits_for="", waits_key=""),
               f"{j.piece}: placed on {found.machine}",
               say=f"{j.piece} goes to {found.machine}" + (f" ({before})" if before else "") + f": {found.why}",
               job=j.id)
    return Go(J.one(ctx.repo, j.id))


def _waits(ctx: Context, j: Job, why: str) -> Go:
    """The job waits for a machine that can run its agent; the lead hears why once."""
    key = re.sub(r"\d{1,2}:\d{2}(:\d{2})?", "", why)  # "skipped until 10:42:07" changes every pass: not news
    if j.waits_key != key:
        ctx.record(j.id, Noted(waits_for=why, waits_key=key), f"{j.piece}: waits", say=f"{j.piece} waits: {why}",
                   job=j.id)
    return Go(None, idle=True)


def _with_room(ctx: Context, j: Job) -> Go:
    """The job, or the same piece for another agent with room; None while its account is past the reserve."""
    r = accounts.refusal(ctx.repo, j.agent, j.machine, ctx.settings.balanced.reserve)
    if r is None or r.past is None:
        return Go(j)
    other = accounts.other_agent(ctx.lead, ctx.settings, j.agent, j.machine)
    if other is not None:
        return Go(_move_queued(ctx, j, other, r.words))
    waits_for_room(ctx, j)
    return Go(None)


def _move_queued(ctx: Context, j: Job, other: tuple[str, str], words: str) -> Job | None:
    """A queued piece whose account has no room goes to another agent with room before it starts."""
    new_agent, machine = other
    said = f"{agent_name(j.agent)} can't take it: {agent_name(new_agent)} instead"
    ctx.record(j.id, Noted(agent=new_agent, model=ctx.default_model(new_agent), machine=machine,
                           why=f"{machine}: {said}", moved_from=j.agent, retry_reason=said, waits_for=""),
               f"{j.piece}: {said}", say=f"{j.piece} has not started, and {agent_name(j.agent)} on {j.machine} takes "
               f"no new workers, as {words}. {said}, on {machine}", job=j.id)
    plan = J.one_plan(ctx.repo, j.plan)
    moves = {**(plan.moves if plan else {}), j.piece: f"{said}: {words}"}
    refs.append(ctx.repo, refs.ref_for("plans", j.plan), "moved", f"{j.piece}: {said}", {"moves": moves})
    return J.one(ctx.repo, j.id)


def waits_for_room(ctx: Context, j: Job) -> bool:
    """True when the job's account is past the reserve; the lead hears why once per window."""
    r = accounts.refusal(ctx.repo, j.agent, j.machine, ctx.settings.balanced.reserve)
    if r is None or r.past is None:
        return False
    key = f"{r.past['type']}@{r.past.get('resets_at')}"
    if j.told_reserve != key:
        ctx.record(j.id, Noted(told_reserve=key, waits_for=r.words), f"{j.piece}: waits for room in its plan",
                   say=f"{j.piece} waits: {agent_name(j.agent)} on {j.machine} takes no new workers, as {r.words}",
                   job=j.id)
    return True
