"""A ref's `.lock` file, made with O_EXCL the way git makes it: how old it is, and removing one its writer left
behind when that writer ended."""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced import ui
from git_balanced.files import Flock

# A writer holds a ref's `.lock` for the milliseconds it takes to write 41 bytes and rename them; one older than
# this was left by a process that ended (killed, or its machine went down) and will never be released.
STALE_LOCK_SECONDS = 60.0


def lock_age(lock: Path) -> float | None:
    """How many seconds ago a lock file was last written, or None when there is none."""
    try:
        return max(0.0, time.time() - lock.stat().st_mtime)
    except FileNotFoundError:
        return None


def remove_if_stale(lock: Path, guard: Path, *, say: bool = True) -> float | None:
    """Remove `lock` when it is older than STALE_LOCK_SECONDS; its age when removed, else None.

    Cleaners take `guard` (a flock) and look at the age again under it: two cleaners that both saw the same
    stale lock must not have the second remove the fresh lock a live writer took after the first removed it."""
    age = lock_age(lock)
    if age is None or age < STALE_LOCK_SECONDS:
        return None
    with Flock(guard):
        age = lock_age(lock)
        if age is None or age < STALE_LOCK_SECONDS:
            return None
        lock.unlink(missing_ok=True)
    if not say:  # the caller lists what it removed
        return age
    ui.note(f"[balanced] Removed a stale lock, {lock}: {int(age)} seconds old, left by a git process that "
            "ended; no writer holds one that long.")
    return age
