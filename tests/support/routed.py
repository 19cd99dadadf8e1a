"""One scripted model server for several agent sessions at once (a chief and its leads): each request takes its
turn from the script of the session it belongs to, found by a marker in its conversation, so sessions running at
the same time never take each other's turns.

A script is a list of blocks, each `(when, steps)`: a block starts on the first request whose conversation
matches `when` (a regex; None matches any), and its steps answer that request and the ones after it. A step is a
Turn, or `Each(pattern, make)`, which answers once for every match of `pattern` in the conversation not answered
yet (the news of a turn may name several questions), then gives way to the next step. A block of Turns runs
once; a block with Each steps runs again whenever one of them has a new match (news comes in several turns).
With no block running and none ready, a request is answered with a short text that ends the turn.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.model_server import ModelServer, Turn, say


@dataclass
class Each:
    """A step answering each new match of `pattern` with `make(match)`; a match is known by its group `key` (or its
    first group)."""

    pattern: str
    make: Callable[[re.Match[str]], Turn]
    done: set[str] = field(default_factory=set)

    def pending(self, text: str) -> re.Match[str] | None:
        """The first match not answered yet."""
        return next((m for m in re.finditer(self.pattern, text)
                     if (m.groupdict().get("key") or m.group(1)) not in self.done), None)

    def next(self, text: str) -> Turn | None:
        m = self.pending(text)
        if m is None:
            return None
        self.done.add(m.groupdict().get("key") or m.group(1))
        return self.make(m)


Step = Turn | Each


class Script:
    """One session's blocks of steps."""

    def __init__(self, blocks: list[tuple[str | None, list[Step]]]) -> None:
        self.blocks = list(blocks)
        self.running: deque[Step] | None = None

    def _ready(self, block: tuple[str | None, list[Step]], text: str) -> bool:
        """A block starts when its `when` matches; one with Each steps only while one has a match not answered
        (it stays, for the next turn's news), one without them once (it is then taken away)."""
        if block[0] is not None and not re.search(block[0], text):
            return False
        each = [s for s in block[1] if isinstance(s, Each)]
        return not each or any(s.pending(text) for s in each)

    def take(self, text: str) -> Turn:
        while True:
            if not self.running:
                found = next((b for b in self.blocks if self._ready(b, text)), None)
                if found is None:
                    return say("Noted.")
                if not any(isinstance(s, Each) for s in found[1]):
                    self.blocks.remove(found)
                self.running = deque(found[1])
            step = self.running[0]
            if isinstance(step, Turn):
                self.running.popleft()
                return step
            turn = step.next(text)
            if turn is not None:
                return turn
            self.running.popleft()


class Routed(ModelServer):
    """A ModelServer whose turns come from `scripts`: (marker, Script), the first whose marker is in the request."""

    def __init__(self) -> None:
        super().__init__([])
        self.scripts: list[tuple[str, Script]] = []
        self._body = threading.local()
        self._route = threading.Lock()

    def record(self, handler: Any, body: Any, main: bool) -> None:
        self._body.text = json.dumps(body, ensure_ascii=False)
        super().record(handler, body, main)

    def _take(self) -> Turn:
        text = getattr(self._body, "text", "")
        with self._route:
            for marker, script in self.scripts:
                if marker in text:
                    return script.take(text)
        return say("Noted.")

    def peek(self) -> Turn | None:
        return None

    def bodies(self, marker: str) -> list[str]:
        """The recorded requests of the session whose conversation holds `marker`."""
        return [t for t in (json.dumps(r.body, ensure_ascii=False) for r in self.main_requests()) if marker in t]
