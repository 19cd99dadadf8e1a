"""`git balanced log`: what landed in the lead's branch, with its notes."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.lead import open_lead
from git_balanced.state import notes


def landings(limit: int = 50) -> list[dict[str, Any]]:
    """Landed commits on the lead's branch, newest first, each with its `refs/notes/balanced` records."""
    lead = open_lead()
    tip = lead.repo.read_ref(lead.ref)  # in-process: None while the branch has no commit yet
    if tip is None:
        return []
    found = notes.newest_landings(lead.repo, tip, limit, most=max(limit * 20, 200))
    return [{"commit": x.commit, "subject": x.subject, "notes": x.records} for x in found]


def log_command(*, limit: int, as_json: bool) -> int:
    rows = landings(limit)
    if as_json:
        ui.emit_json(rows)
        return 0
    if not rows:
        ui.say("Nothing has landed yet.")
        return 0
    lines = []
    for row in rows:
        lines.append(f"{row['commit'][:7]}  {row['subject']}")
        for rec in row["notes"]:
            bits = [f"{k}: {rec[k]}" for k in ("branch", "piece", "attempt", "machine", "agent", "result")
                    if rec.get(k) not in (None, "")]
            if rec.get("cost_usd") is not None:
                bits.append(f"cost: ${rec['cost_usd']:.2f}")
            if rec.get("seconds") is not None:
                bits.append(f"check: {rec.get('check', '')} ({rec['seconds']:.1f}s)")
            lines.append("         " + " · ".join(bits))
    ui.say("\n".join(lines))  # one write: each line shown plain, as a line of its own would be
    return 0
