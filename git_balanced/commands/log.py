"""`git balanced log`: what landed in the lead's branch, with its notes."""

from __future__ import annotations

import json
from typing import Any

from git_balanced import ui
from git_balanced.lead import open_lead
from git_balanced.state import notes


def landings(limit: int = 50) -> list[dict[str, Any]]:
    """Landed commits on the lead's branch, newest first, each with its `refs/notes/balanced` records."""
    lead = open_lead()
    repo = lead.repo
    if repo.read_ref(notes.LANDINGS) is None or repo.rev_parse("HEAD") is None:
        return []
    out = repo.git("log", "--first-parent", f"-n{max(limit * 20, 200)}", "--notes=balanced",
                   "--format=%H%x1f%s%x1f%N%x1e", lead.branch)
    rows: list[dict[str, Any]] = []
    for chunk in out.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) < 3 or not parts[2].strip():
            continue
        records = []
        for line in parts[2].splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
        if records:
            rows.append({"commit": parts[0], "subject": parts[1], "notes": records})
        if len(rows) >= limit:
            break
    return rows


def log_command(*, limit: int, as_json: bool) -> int:
    rows = landings(limit)
    if as_json:
        ui.emit_json(rows)
        return 0
    if not rows:
        ui.say("Nothing has landed yet.")
        return 0
    for row in rows:
        ui.say(f"{row['commit'][:7]}  {row['subject']}")
        for rec in row["notes"]:
            bits = [f"{k}: {rec[k]}" for k in ("branch", "piece", "attempt", "machine", "agent", "result")
                    if rec.get(k) not in (None, "")]
            if rec.get("cost_usd") is not None:
                bits.append(f"cost: ${rec['cost_usd']:.2f}")
            if rec.get("seconds") is not None:
                bits.append(f"check: {rec.get('check', '')} ({rec['seconds']:.1f}s)")
            ui.say("         " + " · ".join(bits))
    return 0
