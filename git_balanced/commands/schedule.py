"""`git balanced schedule add|list|rm`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from git_balanced import ui
from git_balanced.channel.schedules import add, all_schedules, at_time, message, next_time, now, remove, shown_time
from git_balanced.channel.when import HINT
from git_balanced.lead import Lead, open_lead


def add_command(when: str, text: str) -> int:
    """Add a schedule and say when it first fires."""
    lead = open_lead()
    name, w, first = add(lead, when, text)
    at = now()
    nxt = f"first at {shown_time(first, at)}" if first else "it will not come again"
    ui.say(f"Added {name} ({w.text}), {nxt}. A running engine tells the lead then: "
           f"{message(name, w.text, ' '.join(text.split()))}")
    return 0


def rows(lead: Lead) -> list[dict[str, Any]]:
    at = now()
    out = []
    for name, s in sorted(all_schedules(lead).items(), key=lambda kv: int(kv[0][1:])):
        if s["state"] == "removed":
            continue
        f = s["fields"]
        t = next_time(s, at)
        last = at_time(f.get("last_fired"))
        out.append({"name": name, "when": f["when"], "text": f["text"], "state": s["state"],
                    "next": t.isoformat() if t else None, "next_words": shown_time(t, at) if t else None,
                    "last_fired": last.astimezone(at.tzinfo).isoformat() if last else None,
                    "fired": int(f.get("fired") or 0)})
    return out


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
    width = max(len(r["when"]) for r in items)
    for r in items:
        if r["state"] == "done":
            status = f"done, fired {datetime.fromisoformat(r['last_fired']):%Y-%m-%d %H:%M}"
        else:
            status = f"next {r['next_words']}"
        ui.say(f"{r['name']:<4} {r['when']:<{width}}  {status:<24}  {r['text']}")
    return 0


def rm_command(name: str) -> int:
    """Remove a schedule."""
    lead = open_lead()
    s = remove(lead, name)
    ui.say(f"Removed {name} ({s['fields']['when']}): {s['fields']['text']}")
    return 0
