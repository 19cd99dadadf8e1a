"""`git balanced seat CMD`: run a check in one of this machine's check seats, waiting for a free one."""

from __future__ import annotations

import os

from git_balanced.errors import BalancedError, UsageError
from git_balanced.shipped import seats


def budget_here() -> int:
    """This machine's seats for a check run here: the runner's (in a worker), else `[balanced] check_seats` of the
    repository of this folder, else the machine's cores."""
    given = os.environ.get(seats.SEAT_ENV_BUDGET)
    if given:
        return seats.seat_budget(given)
    from git_balanced.git import Repo
    from git_balanced.lead import settings_at

    try:
        repo = Repo.discover()
    except BalancedError:
        return seats.seat_budget(None)
    return seats.seat_budget(settings_at(repo, None).balanced.check_seats)


def seat_command(words: list[str]) -> int:
    """Run the words as one shell command in a seat; its exit code."""
    if not " ".join(words).strip():
        raise UsageError("Name the check to run in a seat.", hint='git balanced seat "pytest -q tests/orders"')
    return seats.seat_main(words, budget_here())
