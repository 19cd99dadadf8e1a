"""One scripted model server for several agent sessions at once (a chief and its leads): each request takes its
turn from the script of the session it belongs to, found by a marker in its conversation, so sessions running at
the same time never take each other's turns.

A script is a list of blocks, each `(when, steps)`: a block starts on the first request whose conversation
matches `when` (a regex; None matches any), and its steps answer that request and the ones after it. A step is a
Turn, or `Each(pattern, make)`, which answers once for every match of `pattern` in the conversation not answered
yet (the news of a turn may name several questions), then gives way to the next step. With no block running and
none matching, a request is answered with a short text that ends the turn.
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

    def next(self, text: str) -> Turn | None:
        for m in re.finditer(self.pattern, text):
            key = m.groupdict().get("key") or m.group(1)
            if key not in self.done:
                self.done.add(key)
                return self.make(m)
        return None


Step = Turn | Each


class Script:
    """One session's blocks of steps."""

    def __init__(self, blocks: list[tuple[str | None, list[Step]]]) -> None:
        self.blocks = list(blocks)
        self.running: deque[Step] | None = None

    def take(self, text: str) -> Turn:
        while True:
            if not self.running:
                found = next((b for b in self.blocks if b[0] is None or re.search(b[0], text)), None)
                if found is None:
                    return say("Noted.")
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
