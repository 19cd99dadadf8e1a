"""The timeline: each machine a lane, each worker a bar from when it was placed (waiting, `░`) and started
(working, `█`) to when it landed, failed or ended, on one time axis, so a glance shows where the time went and
what waited on what."""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.text import Text

from git_balanced.board_app.rows import DOTS
from git_balanced.state.views import Job
from git_balanced.ui import clock
from git_balanced.vocab import DONE, JobState

LABEL = 16  # columns for a worker's handle and piece
ENDED = DONE | {JobState.FINISHED, JobState.HELD}


def _span(j: Job, now: float) -> tuple[float, float, float]:
    """When it was placed, started (its placing when it never did) and ended (now while it goes on)."""
    placed = j.placed_at or j.created
    started = j.started_at or (j.updated if j.state in ENDED else now)
    return placed, max(placed, started), j.updated if j.state in ENDED else now


def lines(jobs: Iterable[Job], handles: dict[str, str], width: int, now: float | None = None) -> list[Text]:
    """The timeline of `jobs`, `width` columns wide: a head with the time axis, then a lane per machine."""
    now = time.time() if now is None else now
    shown = sorted(jobs, key=lambda j: (j.machine != "local", j.machine, j.placed_at or j.created, j.id))
    if not shown:
        return [Text("No worker has started yet.")]
    spans = {j.id: _span(j, now) for j in shown}
    first = min(s[0] for s in spans.values())
    last = max(max(s[2] for s in spans.values()), first + 1)
    room = max(10, width - LABEL - 14)

    def col(t: float) -> int:
        return min(room - 1, int((t - first) / (last - first) * room))

    out = [Text(f"{'':<{LABEL}}{clock(first, seconds=True)} → {clock(last, seconds=True)} "
                f"({_took(last - first)})", style="bold")]
    machine = None
    for j in shown:
        if j.machine != machine:
            machine = j.machine
            out.append(Text(machine, style="bold underline"))
        placed, started, ended = spans[j.id]
        a, b, c = col(placed), col(started), max(col(ended), col(started))
        mark, colour = DOTS.get(j.state, ("?", "white"))
        label = f"  {handles.get(j.id, '')} {j.piece}"[:LABEL]
        row = Text(f"{label:<{LABEL}}" + " " * a)
        row.append("░" * (b - a), style="grey50")
        row.append("█" * (c - b + 1), style=colour)
        row.append(" " * (room - c) + f" {mark} {j.state}")
        out.append(row)
    return out


def _took(seconds: float) -> str:
    s = int(seconds)
    return f"{s} s" if s < 120 else f"{s // 60} min" if s < 7200 else f"{s // 3600} h {s % 3600 // 60} min"
