"""Event commits this process wrote or read, kept by id: a chain read again after each event written (the
engine's readers fold a job's whole chain after every append) reads its older events from here, not from the
object store (three objects an event, each a file or a pack lookup). An object id names its content, so what
is kept never goes stale; only the event.json's bytes are kept, and parsed again at each read, so no reader
shares a mutable event with another."""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without importing threading

from git_balanced import process

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from git_balanced.typed import NamedTuple

KEEP = 4096  # events: some 2 to 4 MB at the most, the live jobs' chains of a large plan


class Kept(NamedTuple):
    """One event commit: its event.json's bytes, its parents, and its subject when this process wrote it."""

    raw: bytes
    parents: tuple[str, ...]
    subject: str | None = None


class ReadBack:
    """(common folder, commit id) to what is kept of it, the oldest dropped first."""

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._items: dict[tuple[str, str], Kept] = {}

    def get(self, where: str, sha: str) -> Kept | None:
        return self._items.get((where, sha))

    def put(self, where: str, sha: str, kept: Kept) -> None:
        with self._lock:
            if len(self._items) >= KEEP:
                self._items.pop(next(iter(self._items)), None)
            self._items[(where, sha)] = kept


def kept() -> ReadBack:
    """This process's kept events."""
    return process.part(ReadBack)
