"""One worker for one piece: a plan of one piece, stored and started at once (`git balanced worker` and the
lead's `worker` tool)."""

from __future__ import annotations

import json
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.lead import Lead
from git_balanced.plans.store import slug, start_plan, store


def start_worker(lead: Lead, task: str, *, machine: str | None, agent: str | None, model: str | None,
                 budget: float | None, run: str | None) -> tuple[str, dict[str, Any]]:
    """Store a plan of one piece and start it; returns (plan id, the stored plan)."""
    if not task.strip():
        raise BalancedError("TASK is empty: say what the worker should do.",
                            hint='git balanced worker "Add a /health endpoint"')
    if run is not None and agent not in (None, "shell"):
        raise BalancedError("--run goes with the shell agent.", hint="drop --agent, or use --agent shell.")
    if agent == "shell" and run is None:
        raise BalancedError("The shell agent runs a command, and none was given.",
                            hint='add --run, e.g. --run "make docs"')
    piece: dict[str, Any] = {"id": slug(task), "task": task}
    if machine:
        piece["machine"] = machine
    if run is not None:
        piece["agent"], piece["run"] = "shell", run
    elif agent:
        piece["agent"] = agent
    if model:
        piece["model"] = model
    doc: dict[str, Any] = {"task": task, "pieces": [piece]}
    if budget is not None:
        doc["budget"] = budget
    plan_id, data = store(lead, json.dumps(doc), "worker", None)
    start_plan(lead, plan_id)
    return plan_id, data
