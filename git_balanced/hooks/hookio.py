"""What an agent's hook reads and prints: the event's JSON on stdin, one line of JSON (or nothing) on stdout, read
and written as json would (shipped/lightjson.py) without importing it."""

from __future__ import annotations

import sys

from git_balanced.errors import BalancedError
from git_balanced.shipped import lightjson

TYPE_CHECKING = False  # typing is not imported for this: the agents' hooks run on every tool call and turn
if TYPE_CHECKING:
    from typing import Any


def read_input() -> dict[str, Any]:
    """The hook's JSON on stdin ({} for none, or for JSON that is not an object)."""
    raw = sys.stdin.read()
    try:
        data = lightjson.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise BalancedError(f"The hook's input is not JSON: {exc}.",
                            hint="agents' hooks call this with the event's JSON on stdin.") from None
    return data if isinstance(data, dict) else {}


def emit(obj: dict[str, Any] | None) -> int:
    """Print the hook's answer, if any, as one line of JSON."""
    if obj is not None:
        sys.stdout.write(lightjson.dumps(obj) + "\n")
    return 0


def answer(name: str, news: str | None) -> dict[str, Any] | None:
    """What the hook `name` prints for the lead's unread messages `news` (None: nothing)."""
    if not news:
        return None
    if name == "stop":  # only new messages block, so a lead is never held in a loop by old ones
        return {"decision": "block", "reason": news}
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": news}}
