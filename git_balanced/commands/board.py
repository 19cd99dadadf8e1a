"""The board: what waits on you (Now), what runs (Running), what comes (Next)."""

from __future__ import annotations

import time

from git_balanced import fence, ui
from git_balanced.engine.board import collect, job_row, under_next
from git_balanced.engine.kept import laid_out
from git_balanced.engine.shown import DOTS, FOLD_AFTER, FOLD_ORDER, collect_shown, engine_line
from git_balanced.kit.boardstamp import told_board
from git_balanced.lead import open_lead
from git_balanced.vocab import DONE, JobState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["collect", "job_row", "render", "board_command"]



def _dot(state: str) -> str:
    return DOTS.get(state, ("?", ""))[0]


def render(data: dict[str, Any], show_all: bool = False) -> str:
    lines: list[str] = []
    if data["now"]:
        lines.append("Now")
        lines += now_lines(data["now"])
    rows = [r for r in data["jobs"] if not under_next(r)]
    spend = _spend_lines(data)
    summed = data.get("folded") or {"rows": 0, "counts": {}, "width": 0}  # plans wholly done, as counts
    if rows or spend or summed["rows"]:  # a queued piece that waits, and a paused worker, are under Next
        lines.append("Running")
        lines += spend
        done = [r for r in rows if r["state"] in DONE]
        live = [r for r in rows if r["state"] not in DONE]
        shown = done if show_all or len(done) + summed["rows"] <= FOLD_AFTER else []
        if not shown and (done or summed["rows"]):
            counts: dict[str, int] = dict(summed["counts"])
            for r in done:
                counts[r["state"]] = counts.get(r["state"], 0) + 1
            lines.append("  " + " · ".join(f"{counts[s]} {s}" for s in FOLD_ORDER if s in counts))
        width = max(max((len(r["piece"]) for r in rows), default=0), summed["width"])
        hwidth = max((len(r.get("handle") or "") for r in shown + live), default=0)
        for r in shown + live:
            bits = [r["machine"], r["agent"] or "", (r["model"] or ""), f"attempt {r['attempt']}"]
            if r["cost_usd"]:
                bits.append(f"${r['cost_usd']:.2f}" + (f" of ${r['budget_usd']:.2f}" if r["budget_usd"] else ""))
            reason = ui.plain(r["reason"], lines=False)
            lines.append(f"  {_dot(r['state'])} {_named(r, hwidth)}{r['piece']:<{width}}  {reason} · "
                         + " · ".join(b for b in bits if b))
    lines += seat_lines(data)
    if data["next"]:
        lines.append("Next")
        handles = {r["id"]: r.get("handle") for r in data["jobs"]}
        for n in data["next"]:
            if "piece" in n and n.get("job"):  # a worker waiting or paused: what names it, for `stop`, `show`...
                named = ", ".join(b for b in (handles.get(n["job"]), n["job"]) if b)
                lines.append(f"  {_dot(str(n.get('state') or JobState.QUEUED))} {n['piece']}  "
                             f"{ui.plain(n['words'], lines=False)}  ({named})")
            else:
                lines.append(f"  · {n['piece']}  {ui.plain(n['words'], lines=False)}" if "piece" in n
                             else f"  {n['text']}")
    if not lines:
        lines.append("Nothing yet. Store a plan with `git balanced plan FILE --start`.")
    if engine_line(data):
        lines.append(engine_line(data))
    fencing = data.get("fence") or {}
    words = fence.unfenced_words_for(fencing.get("why")) if not fencing.get("fenced", True) else None
    if words:
        lines.append(words)
    return ui.plain("\n".join(lines))  # a worker's words are in it: `--watch` does not print through ui.say


def seat_lines(data: dict[str, Any]) -> list[str]:
    """The machines' check seats in use of their budgets, while a check holds one or a worker runs: each holder
    under its machine."""
    from git_balanced.shipped.seats import seat_holder_words

    found = data.get("check_seats") or {}
    live = any(r["state"] == JobState.RUNNING for r in data["jobs"])
    if not found or not (live or any(s.get("in_use") for s in found.values())):
        return []
    out = ["  ▤ check seats: " + " · ".join(f"{m} {s['in_use']}/{s['budget']}" + (
        f" (asked {ui.clock(float(s['at']))})" if s.get("at") else "") for m, s in found.items())]
    out += [f"      {m}, seat {int(h.get('seat', 0)) + 1}: {ui.plain(seat_holder_words(h), lines=False)}"
            for m, s in found.items() for h in s.get("holders") or []]
    return out


def now_lines(items: list[dict[str, Any]], indent: str = "  ") -> list[str]:
    """The rows under Now as the board shows them: a numbered row's text (its notes under it), a worker's dot,
    piece, reason and handle."""
    lines = []
    for r in items:
        if "text" in r:
            lines.append(f"{indent}{r['text']}")  # the lines after the first carry their own indent
        else:
            handle = f"{r['handle']}, " if r.get("handle") else ""
            lines.append(f"{indent}{_dot(r['state'])} {r['piece']}: {ui.plain(r['reason'], lines=False)}  "
                         f"({handle}{r['id']})")
            if r.get("tail"):  # the failing test; `git balanced show JOB` has the whole output
                lines.append(ui.tail(r["tail"], indent=indent + "    "))
                lines.append(f"{indent}    the whole of it: `git balanced show {r['id']}`")
    return lines


def _named(r: dict[str, Any], width: int = 0) -> str:
    """A row's handle (`e3`), padded to `width`, and a space; '' for a row without one."""
    handle = r.get("handle") or ""
    return f"{handle:<{width}} " if handle else (" " * (width + 1) if width else "")


def _spend_lines(data: dict[str, Any]) -> list[str]:
    """The headless lead's row (its turns and spend), and each plan's spend against its budget, the lead's
    turns counted beside its workers'."""
    lines = []
    agent = data.get("lead_agent")
    if agent:
        by = "Lead, started by the chief: " if agent.get("started_by") == "chief" else ""
        lines.append(f"  ◆ lead  {by}{agent['agent']}, {agent['state']} · {agent['turns']} turns · "
                     f"${agent['cost_usd']:.2f}")
    for p in data.get("plans", []):
        if p.get("budget_usd") and p.get("spent_usd") or p.get("lead_usd"):
            budget = f" of ${p['budget_usd']:.2f}" if p.get("budget_usd") else ""
            lines.append(f"  $ plan {p['id']}: ${p['spent_usd']:.2f}{budget} spent (workers ${p['workers_usd']:.2f}, "
                         f"lead ${p['lead_usd']:.2f}) · {ui.plain(p['task'][:50], lines=False)}")
    return lines


def board_command(*, as_json: bool, show_all: bool, watch: bool, live: bool = False,
                  all_projects: bool = False) -> int:
    if all_projects:
        return _all_projects(as_json=as_json)
    lead = open_lead()
    if live:
        from git_balanced import board_app

        return board_app.run(lead)
    if as_json:  # its done rows slim: their kept text is written as it is
        data = collect_shown(lead, slim=True)
        told_board(data, as_json=True)  # whether front.py may keep what this prints (kit/boardstamp.py)
        ui.emit_json(laid_out(data))
        return 0
    folded = None if show_all else FOLD_AFTER  # done workers folded into one line: read as briefs
    if not watch:
        data = collect_shown(lead, folded)
        told_board(data, as_json=False)
        ui.say(render(data, show_all))
        return 0
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    console = Console()
    with Live(Text(render(collect_shown(lead, folded), show_all)), console=console, refresh_per_second=2) as screen:
        try:
            while True:
                time.sleep(1.0)
                screen.update(Text(render(collect_shown(lead, folded), show_all)))
        except KeyboardInterrupt:
            pass
    return 0


def _all_projects(*, as_json: bool) -> int:
    """Every project the chief knows: what waits on you in one list, and a line of what runs in each."""
    from git_balanced.chief import allnow
    read = allnow.read_all()
    if as_json:
        ui.emit_json({**allnow.as_json(read), "boards": {r.project.name: r.board for r in read if r.board}})
        return 0
    ui.say("\n".join(all_lines(read, running=True)))
    return 0


def all_lines(read: list[Any], *, running: bool = False) -> list[str]:
    """Every project's Now in one list, under a line per project (and, with `running`, what runs there)."""
    if not read:
        return ["No projects yet. Add one with `git balanced projects add PATH` (or MACHINE:PATH)."]
    names = [i["name"] for r in read for i in r.now if i.get("name") and i.get("kind") == "question"]
    head = f"Now, over {len(read)} project{'s' if len(read) != 1 else ''}"
    if len(names) > 1:
        head += f" · allow several at once: `git balanced answer --allow {' '.join(names[:4])}`"
    lines = [head]
    for r in read:
        where = r.project.where
        if r.error:
            lines.append(f"{r.project.name} ({where}): not read: {r.error}")
            continue
        extra = f" · {_running(r.board or {})}" if running else ""
        lines.append(f"{r.project.name} ({where}){by_chief(r.board or {})}{extra}"
                     + ("" if r.now else ": nothing waits on you"))
        lines += now_lines(r.now)
    return lines


def by_chief(board: dict[str, Any]) -> str:
    """` · Lead, started by the chief` when the project's headless lead is one the chief started, else ''."""
    agent = board.get("lead_agent")
    return " · Lead, started by the chief" if isinstance(agent, dict) and agent.get("started_by") == "chief" else ""


def _running(board: dict[str, Any]) -> str:
    """What runs in a project, in a few words: its workers by state, its headless lead."""
    counts: dict[str, int] = {}
    for j in board.get("jobs") or []:
        counts[str(j.get("state"))] = counts.get(str(j.get("state")), 0) + 1
    words = " · ".join(f"{n} {s}" for s, n in counts.items()) or "no workers"
    agent = board.get("lead_agent")
    return words + (f" · lead {agent.get('agent')}, {agent.get('state')}" if isinstance(agent, dict) else "")
