"""The deterministic fold of a chain's events into its state: sorted events, states only move forward."""

from __future__ import annotations

from git_balanced.state.events import Event
from git_balanced.vocab import JobState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

# A state may be replaced only by one of equal or higher rank; `landed` outranks everything, so a
# landed job stays landed whatever arrives later, from whichever clone.
JOB_RANK: dict[str, int] = {
    JobState.QUEUED: 1, JobState.RUNNING: 2, JobState.PAUSED: 2, JobState.FINISHED: 3, JobState.HELD: 4,
    JobState.FAILED: 5, JobState.STOPPED: 5, JobState.LOST: 5, JobState.RETRIED: 6, JobState.LANDED: 9,
    JobState.REPORTED: 9,
}
PLAN_RANK = {"created": 0, "started": 1, "done": 2, "cancelled": 2}
SCHEDULE_RANK = {"active": 0, "done": 1, "removed": 2}
RANKS = {"jobs": JOB_RANK, "plans": PLAN_RANK, "schedules": SCHEDULE_RANK}

# A job belongs to the node that claimed it: these events carry the claiming node in `node`.
CLAIMS = ("claimed", "started", "taken-over")
# What only a job's owner may say of it: a state another node writes after the claim does not count.
OWNED = frozenset(JobState) - {JobState.QUEUED}


def owned(events: list[Event]) -> tuple[list[Event], list[str]]:
    """The sorted events that count for a job, and the nodes whose claim lost.

    The first claim in (lamport, node, sha) order wins, so two clones that started one job before they
    synced fold to the same owner; a later claim by another node counts only as a takeover of the owner
    it names. After the claim, states written by any other node are passed over (the loser's start, run
    and landing). Jobs written before claims carried a node have no owner, and fold as they always did."""
    owner: str | None = None
    kept: list[Event] = []
    lost: list[str] = []
    for ev in events:
        claim = ev.data.get("node") if ev.event in CLAIMS else None
        if claim:
            if owner is None or claim == owner or (ev.event == "taken-over" and ev.data.get("taken_from") == owner):
                owner = str(claim)
            else:
                if claim not in lost:
                    lost.append(str(claim))
                continue
        elif owner is not None and ev.node and ev.node != owner and ev.state in OWNED:
            continue
        kept.append(ev)
    return kept, lost


def fold(events: list[Event], rank: dict[str, int] | None = None, *, owners: bool = False) -> dict[str, Any]:
    """Fold sorted events: `state`, the merged `fields`, and when it was made and last changed.

    `git log` on the ref is the history; the folded state keeps only what readers need, so the cache of
    10,000 jobs stays small enough to load in a blink. `owners`: a job's chain, whose events count only
    as `owned` says."""
    events = sorted(events, key=Event.sort_key)
    lost: list[str] = []
    if owners:
        events, lost = owned(events)
    state: str | None = None
    fields: dict[str, Any] = {}
    for ev in events:
        if ev.state is not None:
            if state is None or rank is None or rank.get(ev.state, 0) >= rank.get(state, 0):
                state = ev.state
        for key, value in ev.data.items():
            fields[key] = value
    if lost:
        fields["lost_claims"] = lost
    return {
        "state": state,
        "fields": fields,
        "created": events[0].time if events else None,
        "updated": events[-1].time if events else None,
        "lamport": events[-1].lamport if events else 0,
        "events": len(events),
    }
