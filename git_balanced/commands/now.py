"""`git balanced now` (this project's Now, or with --all every project's in one list), `now note`, and
`not-now` and `go-ahead`: answers to what the lead put under Now."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.channel import now
from git_balanced.lead import open_lead


def not_now_command(name: str | None, reason: str) -> int:
    """Decline a waiting review or idea (named by number or id, or the only one waiting)."""
    r = now.not_now(open_lead(), name, reason)
    ui.say(f"Not now: {r['kind']} {r['id']} ({_first(r)}); the lead hears it in its inbox.")
    return 0


def go_ahead_command(name: str, text: str) -> int:
    """Tell the lead to go ahead with its idea."""
    r = now.go_ahead(open_lead(), name, text)
    ui.say(f"Go ahead: idea {r['id']} ({_first(r)}); the lead hears it in its inbox.")
    return 0


def _first(r: dict[str, object]) -> str:
    return str(r["summary"]).splitlines()[0][:72]


# -- Now: this project's, or every project's -------------------------------------------------------------------
def now_command(*, as_json: bool, every: bool) -> int:
    """What waits on you: in this repository, or with --all in every project the chief knows."""
    if every:
        return _all(as_json=as_json)
    from git_balanced.commands.board import by_chief, now_lines
    from git_balanced.engine.shown import collect_shown

    lead = open_lead()
    data = collect_shown(lead)
    items = data["now"]
    if as_json:
        agent = data.get("lead_agent") or {}
        ui.emit_json({"lead": lead.branch, "lead_started_by": agent.get("started_by"), "now": items})
        return 0
    if not items:
        ui.say(f"Nothing waits on you here{by_chief(data)}. `git balanced now --all` shows every project's Now.")
        return 0
    ui.say("\n".join([f"Now{by_chief(data)}", *now_lines(items)]))
    return 0


def _all(*, as_json: bool) -> int:
    from git_balanced.chief import allnow

    read = allnow.read_all()
    if as_json:
        ui.emit_json(allnow.as_json(read))
        return 0
    from git_balanced.commands.board import all_lines

    ui.say("\n".join(all_lines(read)))
    return 0


def note_command(name: str, text: str, *, by: str, as_json: bool) -> int:
    """Put a line under a row of Now: NAME is its number or id here, or PROJECT.N across projects."""
    from git_balanced.chief import allnow, notes

    parts = allnow.split(name)
    if parts is not None:
        made = notes.note(parts[0], parts[1], text, by=by)
    else:
        made = notes.note_here(open_lead(), name, text, by=by)
    if as_json:
        ui.emit_json(made)
        return 0
    where = f"{made['project']}." if made.get("project") else ""
    row = f"{where}{made['n']}" if made.get("n") else f"{where}{made['row']}"
    ui.say(f"Noted under {row} ({made['row']}): {made['by']}: {made['text']}")
    return 0
