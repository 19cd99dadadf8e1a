"""The order a round's checks start in (rounds.py): the top prefix's checkout first, alone, so the check that
decides a batch with no culprit starts as early as it can; the round's other prefixes after it; and the next
chains merged ahead of their round (rounds.Checker) only once every prefix of the round is checked out, so that
merging, which a batch with no culprit never needs, never delays a check's start.

Nothing here decides what lands: it only orders when the same checks begin."""

from __future__ import annotations

import threading

from git_balanced import proc

POLL = 0.05  # seconds between looks at a stop while waiting for a turn


class Starts:
    """One round's start order. A prefix's check calls `wait(top)` before its checkout and `out()` once
    checked out (or when it needs no checkout, or failed before one): the top's goes at once, the others once the
    top is out; `merged_may_start` holds the next chains' merging until every prefix of the round is out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._left: int | None = None  # prefixes of the round not yet out (None: the round has not begun)
        self.top_out = threading.Event()
        self.all_out = threading.Event()

    def begin(self, prefixes: int) -> None:
        """The round checks `prefixes` prefixes (the top among them or not)."""
        with self._lock:
            self._left = prefixes
            if prefixes <= 0:
                self.top_out.set()
                self.all_out.set()

    def wait(self, top: bool) -> None:
        """Wait for this prefix's turn to check out: the top's at once, the others' once the top is out. An
        engine asked to stop stops waiting (proc.Stopped)."""
        if top:
            return
        while not self.top_out.wait(POLL):
            if proc.stop_asked():
                raise proc.Stopped

    def out(self, top: bool) -> None:
        """This prefix is checked out (or needs no checkout, or ended before one)."""
        if top:
            self.top_out.set()
        with self._lock:
            if self._left is None:
                return
            self._left -= 1
            if self._left <= 0:
                self.all_out.set()

    def merged_may_start(self, stop: threading.Event | None) -> bool:
        """Wait until every prefix of the round is checked out; False when `stop` is set (or an engine asked to
        stop) meanwhile: the merge is not needed any more."""
        while not self.all_out.wait(POLL):
            if (stop is not None and stop.is_set()) or proc.stop_asked():
                return False
        return not (stop is not None and stop.is_set())
