"""The deterministic fold of a chain's events into its state: sorted events, states only move forward."""

from __future__ import annotations

from typing import Any

from git_balanced.state.events import Event

# A state may be replaced only by one of equal or higher rank; `landed` outranks everything, so a
# landed job stays landed whatever arrives later, from whichever clone.
JOB_RANK = {
    "waiting": 0, "queued": 1, "running": 2, "paused": 2, "finished": 3, "checking": 3, "held": 4,
    "failed": 5, "stopped": 5, "lost": 5, "retried": 6, "landed": 9,
}
PLAN_RANK = {"created": 0, "started": 1, "done": 2, "cancelled": 2}
SCHEDULE_RANK = {"active": 0, "done": 1, "removed": 2}
RANKS = {"jobs": JOB_RANK, "plans": PLAN_RANK, "schedules": SCHEDULE_RANK}


def fold(events: list[Event], rank: dict[str, int] | None = None) -> dict[str, Any]:
    """Fold sorted events: `state`, the merged `fields`, and when it was made and last changed.

    `git log` on the ref is the history; the folded state keeps only what readers need, so the cache of
    10,000 jobs stays small enough to load in a blink."""
    events = sorted(events, key=Event.sort_key)
    state: str | None = None
    fields: dict[str, Any] = {}
    for ev in events:
        if ev.state is not None:
            if state is None or rank is None or rank.get(ev.state, 0) >= rank.get(state, 0):
                state = ev.state
        for key, value in ev.data.items():
            fields[key] = value
    return {
        "state": state,
        "fields": fields,
        "created": events[0].time if events else None,
        "updated": events[-1].time if events else None,
        "lamport": events[-1].lamport if events else 0,
        "events": len(events),
    }
