"""The chief's tools (`git balanced mcp --chief`, and Pi's extension for the chief): what the chief does, each in a
project named by its name in `git balanced projects`, through `git balanced` run there (chief/there.py).

None of them allows a command, lands, ships or starts a worker: the chief talks to leads, never to workers.
Each result names the exact ids and the next tool or command.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from git_balanced.channel import presence
from git_balanced.chief import allnow, there
from git_balanced.chief.projects import Project, list_projects
from git_balanced.chief.projects import project as project_of
from git_balanced.engine.shown import collect_shown
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead, open_lead
from git_balanced.vocab import LeadState

AGENTS = ("claude", "codex", "pi")


def headless_lead(lead: Lead) -> dict[str, Any] | None:
    """The headless lead of this branch as the chief reads it (what `lead status --json` says of it), or None."""
    rec = presence.headless_record(lead.repo, lead.branch)
    if rec is None:
        return None
    running = presence.driver_alive(rec)
    state = rec.get("state") if running or rec.get("state") == LeadState.STOPPED else "ended"
    return {"agent": rec.get("agent"), "state": state, "task": rec.get("task"), "turns": rec.get("turns"),
            "cost_usd": rec.get("cost_usd"), "started_by": rec.get("started_by"), "waits_on": rec.get("waits_on")}


def look(lead: Lead) -> dict[str, Any]:
    """What the chief reads of a project in one go: its `board` (as `board --json` gives it) and its headless
    `lead` (None when none was started); `git balanced chief look --json` prints it there."""
    return {"board": collect_shown(lead), "lead": headless_lead(lead)}


def _looked(project: Project) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The project's board and headless lead: read here in this process, or by one call on its machine (two, the
    board and `lead status`, from a git balanced there older than `chief look`)."""
    if not project.machine:
        got = look(open_lead(project.path))
        return got["board"], got["lead"]
    try:
        got = there.data(project, ["chief", "look", "--json"])
    except BalancedError as exc:
        if "No such command" not in exc.message:
            raise
        return allnow.board_of(project), there.data(project, ["lead", "status", "--json"])
    board = got.get("board") if isinstance(got, dict) else None
    if not isinstance(board, dict) or not isinstance(board.get("now"), list):
        raise BalancedError(f"{project.where}: `git balanced chief look --json` did not give a board.",
                            hint=f"update git balanced on {project.machine}.")
    return board, got.get("lead")


def _state(project: Project) -> dict[str, Any]:
    """One project as the chief reads it: its lead, its workers by state, what waits on the person, its plans'
    spend against their budgets; `error` when it could not be read."""
    out: dict[str, Any] = {"name": project.name, "where": project.where}
    try:
        board, lead = _looked(project)
    except BalancedError as exc:
        return {**out, "error": exc.message}
    jobs = board.get("jobs") or []
    out["workers"] = dict(Counter(str(j.get("state")) for j in jobs))
    out["now"] = [{"n": r.get("n"), "kind": r.get("kind"), "text": r.get("text"),
                   **({"qid": r["qid"]} if r.get("qid") else {})} for r in board.get("now") or []]
    out["plans"] = [{"id": p.get("id"), "task": p.get("task"), "state": p.get("state"),
                     "spent_usd": p.get("spent_usd"), "budget_usd": p.get("budget_usd")}
                    for p in board.get("plans") or []]
    if lead:
        out["lead"] = {"agent": lead.get("agent"), "headless": True, "state": lead.get("state"),
                       "task": lead.get("task"), "turns": lead.get("turns"), "cost_usd": lead.get("cost_usd"),
                       "started_by": lead.get("started_by") or "you", "waits_on": lead.get("waits_on")}
    else:
        out["lead"] = None
    session = board.get("lead_session")
    out["leads"] = ([out["lead"]] if out["lead"] else []) + (
        [{"agent": session.get("agent"), "headless": False, "mode": session.get("mode"),
          "model": session.get("model"), "seen_s_ago": session.get("seen_s_ago"), "active": session.get("active")}]
        if isinstance(session, dict) else [])
    return out


def projects() -> dict[str, Any]:
    """Each project, its lead, its workers by state, what waits on the person, and its plans' spend."""
    found = [_state(p) for p in list_projects()]
    return {"projects": found,
            "next": "start_lead(project, task, agent, budget) starts a lead where none runs; tell_lead(project, "
                    "text) tells one a line; note(project, row, text) puts a line under a row of Now."
            if found else "no projects yet: the person adds one with `git balanced projects add PATH`."}


def start_lead(project: str, task: str, agent: str = "claude", budget: float | None = None) -> dict[str, Any]:
    """Start a headless lead in the project, told its task; the board and Now say the chief started it."""
    p = project_of(project)
    if agent not in AGENTS:
        raise BalancedError(f"There is no headless lead for the agent {agent!r}.", hint="one of: claude, codex, pi.")
    told = task.strip()
    if budget:
        told += f"\n\nYour budget for this task is ${budget:.2f}: give it as the plan's budget."
    said = there.said(p, ["lead", "start", "--agent", agent, "--started-by", "chief", told])
    return {"project": p.name, "agent": agent, "task": task, "budget_usd": budget, "said": said.strip(),
            "next": f"projects() shows how it goes; tell_lead(project={p.name!r}, text=...) tells it a line."}


def tell_lead(project: str, text: str) -> dict[str, Any]:
    """A line into the lead's inbox of the project: its next turn reads `Your chief says: TEXT`."""
    p = project_of(project)
    said = there.data(p, ["chief", "tell", "--json", text])
    return {"project": p.name, **(said or {}), "next": "its lead reads it at its next turn; projects() shows it."}


def answer(project: str, question: str, text: str) -> dict[str, Any]:
    """Answer a question the project's lead passed on to the chief: its worker reads `Your chief says: TEXT`."""
    p = project_of(project)
    said = there.data(p, ["chief", "reply", "--json", question, text])
    return {"project": p.name, **(said or {}), "next": "nothing: the worker has its answer."}


def pass_on(project: str, question: str) -> dict[str, Any]:
    """Hand a question the lead passed on to the chief to the person: it shows under their Now."""
    p = project_of(project)
    said = there.data(p, ["chief", "hand", "--json", question])
    return {"project": p.name, **(said or {}),
            "next": "the person answers it under Now (`git balanced now --all`)."}


def note(project: str, row: str, text: str) -> dict[str, Any]:
    """A line under a row of the project's Now, for the person (`Chief: ship this one first`)."""
    from git_balanced.chief.notes import note as put

    made = put(project_of(project).name, row, text, by="Chief")
    return {**made, "next": "the person reads it under the row in `git balanced now --all`."}


def _line(s: dict[str, Any]) -> str:
    if s.get("error"):
        return f"{s['name']}: could not be read ({s['error']})"
    lead = s.get("lead")
    who = f"its lead ({lead['agent']}, {lead['state']}, started by {lead['started_by']})" if lead else \
        "no headless lead"
    workers = ", ".join(f"{n} {state}" for state, n in sorted(s["workers"].items())) or "no workers"
    spend = "; ".join(f"plan {p['id']} ${float(p['spent_usd'] or 0):.2f}" + (
        f" of ${float(p['budget_usd']):.2f}" if p.get("budget_usd") else "") for p in s["plans"])
    n = len(s["now"])
    waits = f"{n} wait{'s' if n == 1 else ''} on the person" if n else "nothing waits on the person"
    return f"{s['name']}: {who}; {workers}; {waits}" + (f"; {spend}" if spend else "")


def how_are_they_doing() -> dict[str, Any]:
    """One summary over every lead, in words a person reads, and each project's state."""
    found = [_state(p) for p in list_projects()]
    return {"summary": "\n".join(_line(s) for s in found) or "No projects yet.", "projects": found,
            "next": "`git balanced now --all` shows what waits on the person, in every project."}
