"""`git balanced plan`, `plans`, `start` and `worker`."""

from __future__ import annotations

import sys
from typing import Any

from git_balanced import ui
from git_balanced.errors import BalancedError, UsageError
from git_balanced.jobs import all_plans
from git_balanced.lead import open_lead
from git_balanced.plans.bounds import read_source
from git_balanced.plans.store import start_plan, store
from git_balanced.plans.worker import start_worker


def show_plan(plan_id: str, data: dict[str, Any]) -> None:
    budget = f" · budget ${data['budget_usd']:.2f}" if data.get("budget_usd") is not None else ""
    n = len(data["pieces"])
    ui.say(f"Plan {plan_id}: {ui.plain(data['task'], lines=False)} · {n} piece{'s' if n != 1 else ''}{budget}")
    rows: list[tuple[str, str] | ui.Under] = []
    for p in data["pieces"]:
        why = p["why"] if p["placed"] else f"waits: {p['why']}"  # no machine can take it now
        share = f" · ${p['budget_usd']:.2f}" if p.get("budget_usd") is not None else ""
        rows.append((p["id"], f"{p['after_words'] or why}{share}"))
        if p["after_words"]:
            rows.append(ui.Under(f"then {why}"))
        if p.get("branch_note"):
            rows.append(ui.Under(p["branch_note"]))
    ui.table(rows, indent=2)


def plan_command(source: str, *, budget: float | None, start: bool, as_json: bool, wait: bool = False,
                 until_idle: bool = False) -> int:
    """Store the plan file (refused when a piece can never be placed, unless `wait`), and start it if asked;
    with `until_idle`, run the engine in this process until nothing can move (one start of Python, not two)."""
    if until_idle and not start:
        raise UsageError("--until-idle runs the plan, so it goes with --start.",
                         hint="`git balanced plan FILE --start --until-idle`.")
    lead = open_lead()
    if until_idle:
        from git_balanced.engine.background import EngineLock

        if (pid := EngineLock(lead).holder()) is not None:  # refused before anything is stored
            raise BalancedError(f"An engine already runs for this repository (pid {pid}): this process cannot run "
                             "the plan beside it.",
                             hint="store and start it without --until-idle (`git balanced plan FILE --start`): that "
                                  "engine runs it; `git balanced board` shows it.")
    text, name = read_source(source)
    plan_id, data = store(lead, text, name, budget, wait=wait)
    if start:
        start_plan(lead, plan_id)
    if as_json:
        ui.emit_json({"plan": plan_id, **data, "started": start})
    else:
        show_plan(plan_id, data)
        ui.say("Started: the engine runs it here until nothing can move." if until_idle else
               "Started: `git balanced engine` runs it; `git balanced board` shows it." if start else
               f"Start it with `git balanced start {plan_id}`.")
    if until_idle:
        from git_balanced.commands.engine import run_here

        # Its modules are imported by now: no second start. After --json, its events go to stderr.
        return run_here(lead, once=False, until_idle=True, told=sys.stderr if as_json else None)
    return 0


def start_command(plan_id: str | None) -> int:
    lead = open_lead()
    pid = start_plan(lead, plan_id)
    ui.say(f"Plan {pid} started. `git balanced engine` runs it (or `engine --detach` in the background).")
    return 0


def plans_command(*, as_json: bool) -> int:
    lead = open_lead()
    plans = all_plans(lead.repo)
    rows = [{"id": pid, "state": p.state, "task": p.task, "lead": p.lead, "pieces": len(p.pieces),
             "budget_usd": p.budget_usd, "created": p.created} for pid, p in sorted(plans.items(), reverse=True)]
    if as_json:
        ui.emit_json(rows)
        return 0
    if not rows:
        ui.say("No plans yet. Store one with `git balanced plan FILE`.")
    ui.table([(str(r["id"]), str(r["state"]), f"{r['pieces']} piece{'s' if r['pieces'] != 1 else ''}", str(r["task"]))
              for r in rows], least=(0, 8))
    return 0


def worker_command(task: str, *, machine: str | None, agent: str | None, model: str | None,
                   budget: float | None, run: str | None) -> int:
    """One worker for one piece: a plan of one piece, started at once."""
    lead = open_lead()
    _, data = start_worker(lead, task, machine=machine, agent=agent, model=model, budget=budget, run=run)
    p = data["pieces"][0]
    where = f"on {p['placed']} ({p['why']})" if p["placed"] else f"waits, as {p['why']}"
    ui.say(f"Worker for {p['id']} {where}, branch {p['branch']}. `git balanced engine` runs it.")
    return 0
