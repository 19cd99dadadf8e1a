"""`git balanced schedule add|list|rm`."""

from __future__ import annotations

from datetime import datetime

from git_balanced import ui
from git_balanced.channel.schedules import add, message, now, remove, rows, shown_time
from git_balanced.channel.when import HINT
from git_balanced.lead import open_lead
from git_balanced.models import utf8_arguments

__all__ = ["add_command", "list_command", "rm_command", "rows"]


def add_command(when: str, text: str) -> int:
    """Add a schedule and say when it first fires."""
    utf8_arguments("schedule add", when, text)
    lead = open_lead()
    name, w, first = add(lead, when, text)
    at = now()
    nxt = f"first at {shown_time(first, at)}" if first else "it will not come again"
    ui.say(f"Added {name} ({w.text}), {nxt}. A running engine tells the lead then: "
           f"{message(name, w.text, ' '.join(text.split()))}")
    return 0


def list_command(*, as_json: bool) -> int:
    """Every schedule of this lead with its next time."""
    lead = open_lead()
    items = rows(lead)
    if as_json:
        ui.emit_json(items)
        return 0
    if not items:
        ui.say(f"No schedules yet. Add one: {HINT}")
        return 0
    lines = []
    for r in items:
        if r["state"] == "done":
            status = f"done, fired {datetime.fromisoformat(r['last_fired']):%Y-%m-%d %H:%M}"
        else:
            status = f"next {r['next_words']}"
        lines.append((r["name"], r["when"], status, r["text"]))
    ui.table(lines, least=(3, 0, 24))
    return 0


def rm_command(name: str) -> int:
    """Remove a schedule."""
    lead = open_lead()
    s = remove(lead, name)
    ui.say(f"Removed {name} ({s['fields']['when']}): {s['fields']['text']}")
    return 0
