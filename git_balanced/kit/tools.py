"""The lead's tools as plain functions: values in, a JSON-ready dict out. Each calls the same functions the
CLI's commands call, so a tool refuses with the very BalancedError (message and hint) the command would.
kit/verbs.py declares each (its arguments, words and hints) and the MCP server (kit/server.py) offers them;
nothing here knows of MCP."""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import fields
from typing import TYPE_CHECKING, Any, cast, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from git_balanced.channel import presence
from git_balanced.jobs import FILE_OPTIONS, PieceOptions
from git_balanced.kit.results import (
    Answered,
    BoardResult,
    GcResult,
    InboxResult,
    LandResult,
    LogsResult,
    MachinesResult,
    Message,
    NowRow,
    Passed,
    Placed,
    PlanResult,
    Retried,
    ScheduleAdded,
    ScheduleRemoved,
    Schedules,
    ShowResult,
    StartResult,
    Stopped,
    Told,
    WorkerResult,
)
from git_balanced.lead import Lead, open_lead
from git_balanced.vocab import JobState


class _PieceCore(BaseModel):
    """One piece of a plan, as a plan file's `pieces` entry."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="[a-z0-9-]+, unique in the plan; the worker's branch is balanced/<id>.")
    task: str = Field(description="What the worker does, in words a worker can finish alone.")
    size: float | None = Field(None, description="Relative size (default 1); the budget is shared by size.")
    after: list[str] | None = Field(None, description="Ids of pieces that must land before this one starts.")
    machine: str | None = Field(None, description="An explicit machine (never falls back); default: placed.")


def _options() -> dict[str, Any]:
    """The piece's options a plan file sets (PieceOptions), each optional here, with its words from there."""
    hints = get_type_hints(PieceOptions)
    return {f.name: (hints[f.name] | None, Field(None, description=inspect.cleandoc(f.metadata["doc"])))
            for f in fields(PieceOptions) if f.name in FILE_OPTIONS}


if TYPE_CHECKING:
    Piece = _PieceCore
else:  # the options come from the one piece type, so a new one needs no line here
    Piece = create_model("Piece", __base__=_PieceCore, __doc__=_PieceCore.__doc__, **_options())


def _lead() -> Lead:
    lead = open_lead()
    if not os.environ.get(presence.HEADLESS_ENV):  # a session that calls its tools is there to answer its workers; the
        presence.mark_seen(lead.repo, lead.branch)  # headless lead's own record says whether it runs
    return lead


def _engine(lead: Lead) -> str:
    """Make sure an engine runs the started work, and say which."""
    from git_balanced.engine.background import start_detached

    pid, started = start_detached(lead)  # never an engine on its way out: that one is followed by a new one
    return f"started in the background (pid {pid})" if started else \
        f"running (pid {pid}), woken to take this on its next pass"


def _placed(p: dict[str, Any]) -> Placed:
    return {"id": p["id"], "machine": p["placed"], "why": p["why"], "agent": p["agent"], "branch": p["branch"],
            "after": p["after"], "waits": p["after_words"] or None, "budget_usd": p.get("budget_usd"),
            "note": p.get("branch_note")}


def plan(task: str, pieces: list[Piece], budget: float | None = None, start: bool = True) -> PlanResult:
    """Store a plan and place each piece; with `start`, start it and make sure an engine runs it."""
    from git_balanced.plans.store import start_plan, store

    lead = _lead()
    doc: dict[str, Any] = {"task": task, "pieces": [p.model_dump(exclude_none=True) for p in pieces]}
    plan_id, data = store(lead, json.dumps(doc), "the plan tool", budget)
    if start:
        start_plan(lead, plan_id)
    return {"plan": plan_id, "task": data["task"], "budget_usd": data["budget_usd"], "started": start,
            "pieces": [_placed(p) for p in data["pieces"]], "engine": _engine(lead) if start else None}


def start(plan: str | None = None) -> StartResult:
    """Start a stored plan (default: the newest live one) and make sure an engine runs it."""
    from git_balanced.plans.store import start_plan

    lead = _lead()
    return {"plan": start_plan(lead, plan), "engine": _engine(lead)}


def worker(task: str, machine: str | None = None, agent: str | None = None, model: str | None = None,
           budget: float | None = None, run: str | None = None) -> WorkerResult:
    """One worker for one piece, started at once."""
    from git_balanced.plans.worker import start_worker

    lead = _lead()
    plan_id, data = start_worker(lead, task, machine=machine, agent=agent, model=model, budget=budget, run=run)
    return {"plan": plan_id, **_placed(data["pieces"][0]), "engine": _engine(lead)}


def board() -> BoardResult:
    """The board: what waits on the person (now), the workers (jobs), what comes (next)."""
    from git_balanced.engine.shown import collect_shown

    return cast(BoardResult, collect_shown(_lead()))


def inbox() -> InboxResult:
    """What the lead was not handed yet (by this tool or its hooks), oldest first; marks it handed over."""
    from git_balanced.hooks.agent import mark_read, unread

    lead = _lead()
    items, newest = unread(lead.repo, lead.branch)
    if newest is not None:
        mark_read(lead.repo, lead.branch, newest)
    from git_balanced import handles

    keep = ("id", "time", "kind", "text", "job", "qid", "plan", "row", "answer", "handle")
    return {"lead": lead.branch, "count": len(items),
            "messages": [cast(Message, {k: e[k] for k in keep if k in e})
                         for e in handles.add_to_entries(lead.repo, lead.branch, items)]}


def _answered(qid: str, f: dict[str, Any]) -> Answered:
    from git_balanced.channel.questions import shown_answer

    return {"question": qid, "piece": f.get("piece"), "job": f.get("job"), "decision": f.get("decision"),
            "answer": shown_answer(f)}


def answer(id: str, text: str) -> Answered:
    """Answer a worker's question in words."""
    from git_balanced.channel.questions import answer as settle
    from git_balanced.channel.questions import checked_answer

    decision = checked_answer(id, text, False, False)
    return _answered(id, settle(_lead().repo, id, text, decision))


def allow(id: str, reason: str = "") -> Answered:
    """Let a worker run what it asked to run."""
    from git_balanced.channel.questions import answer as settle

    return _answered(id, settle(_lead().repo, id, reason, "allow"))


def deny(id: str, reason: str) -> Answered:
    """Refuse what a worker asked to run; it reads the reason."""
    from git_balanced.channel.questions import answer as settle

    return _answered(id, settle(_lead().repo, id, reason, "deny"))


def pass_(id: str) -> Passed:
    """Hand a worker's question to the person: it shows under Now on the board."""
    from git_balanced.channel.questions import pass_to_you

    q = pass_to_you(_lead().repo, id)
    said = "to the chief" if q.get("to_chief") else "passed"
    return {"question": id, "piece": q["fields"].get("piece"), "state": said}


def land(names: list[str] | None = None, take_all: bool = False) -> LandResult:
    """Check and land finished workers (by job id or branch) or local branches through the landing queue.
    Protected paths are never approved here: that is the person's `git balanced land NAME --yes`."""
    from git_balanced.landing.candidates import record
    from git_balanced.landing.named import resolve
    from git_balanced.landing.queue import Queue

    lead = _lead()
    cands = resolve(lead, list(names or []), take_all)
    if not cands:
        return {"verdicts": [], "check_runs": 0, "rounds": 0, "words": "Nothing to land." if take_all else
                "Name branches or jobs to land, or set take_all."}
    q = Queue(lead)
    verdicts = q.run(cands)
    record(lead, verdicts)
    return {"verdicts": [v.as_dict() for v in verdicts], "check_runs": q.check_runs,
            "checks_stopped": q.checks_stopped, "rounds": q.rounds,
            "words": None, "machine_checks": q.machine_checks, "machines_dropped": q.machines_dropped}


def stop(job: str) -> Stopped:
    """Stop a job; it is not tried again, and its branch is kept."""
    from git_balanced.engine.control import stop_job

    j, kept = stop_job(_lead(), job)
    return {"job": j.id, "piece": j.piece, "state": JobState.STOPPED, "branch_kept": kept}


def retry(job: str) -> Retried:
    """Try a failed or stopped job again, as a new attempt from what it committed."""
    from git_balanced.engine.control import retry_job

    lead = _lead()
    j, new = retry_job(lead, job)
    return {"job": j.id, "piece": j.piece, "new_job": new, "attempt": j.attempt + 1, "engine": _engine(lead)}


def show(job: str) -> ShowResult:
    """One job in full: what it did, its events, the whole output of the check that failed on it."""
    from git_balanced.engine.detail import detail

    return detail(_lead(), job)  # type: ignore[return-value]  # the board's row and more, checked by the server


LOG_LINES = 300  # the newest lines of a log the tool hands over


def logs(job: str) -> LogsResult:
    """A worker's log as turns, tool calls and results, read on its machine; its newest LOG_LINES lines."""
    from git_balanced.agents.transcript import render
    from git_balanced.engine import reach

    lead = _lead()
    j = reach.job_named(lead, job)
    chunk = reach.read_log(lead, j)
    lines = render(chunk.text)
    return {"job": j.id, "piece": j.piece, "state": j.state, "found": chunk.found, "lines": lines[-LOG_LINES:],
            "cut": max(0, len(lines) - LOG_LINES)}


def tell(job: str, text: str) -> Told:
    """Leave a line for a running agent worker; it reads it at its next tool call."""
    from git_balanced.engine import reach

    j = reach.tell(_lead(), job, text)
    return {"job": j.id, "piece": j.piece, "told": " ".join(text.split())}


def gc(older_than: float | None = None) -> GcResult:
    """Fold plans done long ago, with their jobs, into the archive, and remove their refs."""
    from git_balanced.state.archive import gc as fold

    return cast(GcResult, fold(_lead(), older_than))


def machines() -> MachinesResult:
    """Every machine: local, added ones, SSH hosts not added yet; ticked, ready, running, preference."""
    from git_balanced.machines.placing.table import rows

    return {"machines": rows()}


def schedule_add(when: str, text: str) -> ScheduleAdded:
    """Add a schedule; when due, the lead hears `[balanced] Scheduled (NAME, WHEN): TEXT`."""
    from git_balanced.channel.schedules import add, now, shown_time

    name, w, first = add(_lead(), when, text)
    return {"name": name, "when": w.text, "text": " ".join(text.split()),
            "first": first.isoformat() if first else None, "first_words": shown_time(first, now()) if first else None}


def schedule_list() -> Schedules:
    """Every schedule of this lead, with its next time."""
    from git_balanced.channel.schedules import rows

    return {"schedules": rows(_lead())}


def schedule_rm(name: str) -> ScheduleRemoved:
    """Remove a schedule."""
    from git_balanced.channel.schedules import remove

    s = remove(_lead(), name)
    return {"name": name, "when": s["fields"]["when"], "text": s["fields"]["text"], "state": "removed"}


def put_to_you(summary: str, attachments: list[str] | None = None) -> NowRow:
    """Put the work to the person: a row under Now with the summary, what would ship, the check run again
    on the branch, and the attachments. Nothing is pushed: shipping is the person's answer. Attachments are
    files of the working tree that git does not ignore, or of a folder `[balanced] attach_from` names; at most
    20 files and 20 MB together."""
    from git_balanced.landing.now import put_to_you as put

    return cast(NowRow, put(_lead(), summary, list(attachments or [])))


def idea(text: str) -> NowRow:
    """Put an idea to the person under Now; their go-ahead comes back in the inbox."""
    from git_balanced.channel.now import idea as put_idea

    return cast(NowRow, put_idea(_lead(), text))
