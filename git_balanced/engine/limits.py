"""Plan usage limits in the engine (DESIGN §8): a worker refused for its plan's limit pauses until the reset
and goes on from what it did, or moves to another agent with room when the reset is far; an account past
the reserve takes no new workers. The engine calls these with itself; the windows live in accounts.py."""

from __future__ import annotations

import time
from typing import Any

from git_balanced import jobs as J
from git_balanced.engine import workers
from git_balanced.jobs import Job
from git_balanced.machines import accounts
from git_balanced.machines.accounts import agent_name
from git_balanced.state import cache, refs
from git_balanced.ui import clock

RESUME_NOTE = ("You were paused by your plan's usage limit, which has reset. Carry on from what you committed "
               "and what is in the worktree; do not start over.")
# What a new worker of the piece keeps of the paused one: the piece, its branch and its base.
CARRIED = ("plan", "piece", "task", "title", "plan_task", "run", "paths", "branch", "base", "lead", "after",
           "attempt")


def spent(j: Job) -> float:
    """What the job's runs cost so far (its cost counts the runs before a pause too)."""
    cost = j.f.get("cost_usd")
    return float(cost) if cost is not None else float(j.f.get("spent_before") or 0)


def budget_left(j: Job) -> float | None:
    """The job's budget less what it spent, or None without a budget (a shell command spends nothing)."""
    budget = j.f.get("budget_usd")
    if budget is None or j.f.get("agent", "shell") == "shell":
        return None
    return round(max(0.0, float(budget) - spent(j)), 4)


def pause(eng: Any, j: Job, outcome: Any, data: dict[str, Any]) -> None:
    """Pause a refused worker until its limit resets plus a minute, or move the piece if that is far."""
    now = time.time()
    agent = str(j.f.get("agent") or "shell")
    known = outcome.reset_at is not None
    reset = float(outcome.reset_at) if known else now + accounts.unknown_reset()
    accounts.record(eng.repo, agent, j.machine, [], limited_until=reset)
    if reset - now > accounts.MOVE_AFTER:
        other = accounts.other_agent(eng.lead, eng.settings, agent, j.machine)
        if other is not None:
            move(eng, j, data, other, reset)
            return
    resume = max(reset, now) + accounts.resume_margin()
    J.event(eng.repo, j.id, "paused", f"{j.piece}: paused for its plan's usage limit until {clock(reset)}",
            {**data, "reset_at": reset, "resume_at": resume, "reset_known": known}, state="paused")
    if known:
        words = f"It pauses until the limit resets at {clock(reset)}"
    else:
        words = (f"{agent_name(agent)} does not say when the limit resets, so it pauses until {clock(reset)} "
                 "and tries again")
    eng.say(f"{j.piece} reached its plan's usage limit. {words}", job=j.id)


def move(eng: Any, j: Job, data: dict[str, Any], other: tuple[str, str], reset: float) -> None:
    """The piece goes on as a new worker of another agent, on the same branch, with what is left of its budget."""
    new_agent, machine = other
    words = f"{agent_name(str(j.f.get('agent')))} can't take it: {agent_name(new_agent)} instead"
    fields = {k: v for k, v in j.f.items() if k in CARRIED}
    fields.update(agent=new_agent, model=eng._default_model(new_agent), machine=machine, previous=j.id,
                  why=f"{machine}: {words}", retry_reason=words, moved_from=j.f.get("agent"))
    left = budget_left(Job(j.id, j.state, {**j.f, **data}, j.created, j.updated))
    if left is not None:
        fields["budget_usd"] = left
    if j.machine != machine:
        eng._fetch_back(j, data)  # what the first did, for the copy on the other machine
    workers.cleanup(eng.lead, j)  # the branch is checked out in its worktree: free it for the new one
    new = J.place(eng.repo, fields)
    J.event(eng.repo, j.id, "moved", f"{j.piece}: {words}",
            {**data, "decided": True, "next": new, "moved_to": new_agent, "reason": words, "reset_at": reset},
            state="retried")
    plan = cache.read_one(eng.repo, "plans", j.plan)
    moves = dict((plan or {}).get("fields", {}).get("moves") or {})
    moves[j.piece] = f"{words}: its plan's usage limit resets at {clock(reset)}"
    refs.append(eng.repo, refs.ref_for("plans", j.plan), "moved", f"{j.piece}: {words}", {"moves": moves})
    eng.say(f"{j.piece} reached its plan's usage limit, which resets at {clock(reset)}. {words}, on {machine}",
            job=new)


def resume(eng: Any, paused: list[Job]) -> None:
    """Start the paused workers whose reset has passed, in their own worktrees, told to carry on."""
    for j in paused:
        if time.time() < float(j.f.get("resume_at", 0)):
            continue
        run = int(j.f.get("run_no", 1)) + 1
        J.event(eng.repo, j.id, "resuming", f"{j.piece}: carries on after its usage limit",
                {"run_no": run, "resume_note": RESUME_NOTE, "spent_before": spent(j), "cost_usd": None})
        fresh = J.one(eng.repo, j.id)
        assert fresh is not None
        workers.start(eng.lead, fresh, eng.cmds.setup, eng.cmds.check,
                      eng.settings.balanced.workers_edit_without_asking)
        eng.say(f"{j.piece}: its usage limit has reset, so it carries on", job=j.id)


def waits_for_room(eng: Any, j: Job) -> bool:
    """True when the job's account is past the reserve; the lead hears why once per window."""
    agent = str(j.f.get("agent") or "shell")
    r = accounts.refusal(eng.repo, agent, j.machine, eng.settings.balanced.reserve)
    if r is None or r.past is None:
        return False
    key = f"{r.past['type']}@{r.past.get('resets_at')}"
    if j.f.get("told_reserve") != key:
        J.event(eng.repo, j.id, "noted", f"{j.piece}: waits for room in its plan",
                {"told_reserve": key, "waits_for": r.words})
        eng.say(f"{j.piece} waits: {agent_name(agent)} on {j.machine} takes no new workers, as {r.words}",
                job=j.id)
    return True
