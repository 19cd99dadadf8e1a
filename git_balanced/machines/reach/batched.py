"""Per-piece runner requests to one SSH machine, sent together so that N pieces cost a few round trips, not N.

The engine asks a machine about its pieces one at a time: the log of each worker that finished, then, once a
piece landed, the cleanup of its worktree. Through a runner session each request is a round trip, which
loopback hides and a real network does not (bench/dispatch.py --rtt). Two helpers take them together:

- `ReadAhead`: what the engine will ask next, asked in one message as soon as it is known (the logs of the
  workers a status answer says finished), in the background; the engine's own request then takes the
  answer instead of going over the network. An answer is taken once, and is forgotten after KEEP seconds.
- `Coalesced`: requests whose answer nobody reads (a cleanup), sent in the background; those that come
  while one message is on its way go together in the next. `wait()` is the barrier: a request that could
  meet them there (a start, a push, anything about the same job) waits for the ones queued before it, so
  their order there is kept; reading the state of other jobs does not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

KEEP = 30.0  # seconds an answer read ahead is kept for the request it stands for

Send = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
Key = tuple[str, str]  # (job, the request as JSON)


class ReadAhead:
    """Answers asked for ahead of the requests they answer, each taken once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Key, tuple[float, Future[dict[str, Any] | None]]] = {}

    def ask(self, keyed: list[tuple[Key, dict[str, Any]]], send: Send) -> None:
        """Send these requests in one message, in the background; `keyed` pairs each with the key `take`
        will find its answer under."""
        if not keyed:
            return
        futures: list[Future[dict[str, Any] | None]] = [Future() for _ in keyed]
        now = time.monotonic()
        with self._lock:
            self._sweep(now)
            for (key, _), fut in zip(keyed, futures, strict=True):
                self._held[key] = (now, fut)

        def run() -> None:
            try:
                answers: list[Any] = send([r for _, r in keyed])
            except BaseException:  # the request goes again on its own, and says why then
                answers = []
            for i, fut in enumerate(futures):
                fut.set_result(answers[i] if i < len(answers) and isinstance(answers[i], dict) else None)

        threading.Thread(target=run, name="balanced-read-ahead", daemon=True).start()

    def take(self, key: Key, timeout: float) -> dict[str, Any] | None:
        """The answer asked ahead under `key` (waiting for it while it is on its way); None when there is
        none, it failed, or it did not come within `timeout`."""
        with self._lock:
            held = self._held.pop(key, None)
        if held is None or time.monotonic() - held[0] > KEEP:
            return None
        try:
            return held[1].result(timeout)
        except TimeoutError:
            return None

    def forget(self, jobs: list[str]) -> None:
        """Drop what is held for these jobs (they start, stop or are cleaned up: their logs change)."""
        drop = set(jobs)
        with self._lock:
            for key in [k for k in self._held if k[0] in drop]:
                del self._held[key]

    def _sweep(self, now: float) -> None:
        for key in [k for k, (at, _) in self._held.items() if now - at > KEEP]:
            del self._held[key]


class Coalesced:
    """Requests sent in the background, those that queue meanwhile together in the next message."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[tuple[dict[str, Any], Send]] = []
        self._busy = False
        self._jobs: list[str] = []  # the jobs of the requests queued or on their way

    def add(self, request: dict[str, Any], send: Send) -> None:
        """Queue a request; it goes at once if nothing is on its way, else with the next message."""
        with self._cond:
            self._queue.append((request, send))
            self._jobs.append(str(request.get("job", "")))
            if self._busy:
                return
            self._busy = True
        threading.Thread(target=self._drain, name="balanced-coalesced", daemon=True).start()

    def _drain(self) -> None:
        while True:
            with self._cond:
                batch, self._queue = self._queue, []
                if not batch:
                    self._busy = False
                    self._jobs = []
                    self._cond.notify_all()
                    return
            try:
                batch[-1][1]([r for r, _ in batch])  # the newest sender: each would send the same way
            except BaseException:  # nobody reads these answers: housekeeping, as before
                pass
            with self._cond:
                self._jobs = [str(r.get("job", "")) for r, _ in self._queue]
                self._cond.notify_all()

    def wait(self, jobs: list[str] | None = None) -> None:
        """Return once every request queued so far has been answered (or failed); with `jobs`, once those
        of these jobs have."""
        with self._cond:
            while self._busy and (jobs is None or not set(jobs).isdisjoint(self._jobs)):
                self._cond.wait()
