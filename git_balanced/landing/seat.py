"""The landing's check takes one of this machine's check seats (shipped/seats.py), as every worker's check does:
at most `[balanced] check_seats` checks run at once on a machine, the landing's among them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from git_balanced import proc, ui
from git_balanced.git import Repo
from git_balanced.shipped import seats


def budget_of(repo: Repo) -> int:
    """`[balanced] check_seats` as committed at HEAD (the lead's own), or the machine's cores when it is 0; kept
    for the board."""
    from git_balanced.machines.placing import check_seats

    n = seats.seat_budget(check_seats.setting(repo))
    check_seats.remember(repo, check_seats.LOCAL, n)
    return n


def waiting_words(n: int, holders: list[dict[str, Any]]) -> str:
    held = "; ".join(seats.seat_holder_words(h) for h in holders) or "their holders are starting"
    return f"The landing's check waits for one of this machine's {n} check seats: {held}."


@contextmanager
def landing_seat(repo: Repo, command: str, budget: int | None = None) -> Iterator[seats.Seat | None]:
    """Hold a check seat while the landing's check runs (of `budget` seats, when the caller read it already);
    while all are taken, say who holds them (on stderr) and wait. An engine asked to stop stops waiting
    (proc.Stopped)."""
    n = budget if budget is not None else budget_of(repo)
    try:
        seat = seats.seat_take(n, {"who": f"the landing of {repo.root}", "command": command},
                               on_wait=lambda now: ui.note(waiting_words(n, now)), stop=proc.stop_asked)
    except OSError as exc:  # no seats folder here that it may use: the check runs all the same, and says so
        ui.note(f"This machine's check seats cannot be used ({exc}); the landing's check runs without one.")
        yield None
        return
    if seat is None:
        raise proc.Stopped
    with seat:
        yield seat
