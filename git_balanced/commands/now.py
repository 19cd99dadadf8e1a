"""`git balanced not-now` and `go-ahead`: answers to what the lead put under Now."""

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
