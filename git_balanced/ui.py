"""What the user sees: words on stdout or stderr, JSON on stdout."""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def say(text: str = "") -> None:
    """A line for the user on stdout."""
    print(text, flush=True)


def note(text: str) -> None:
    """A line about what is going on, on stderr, so stdout stays clean for data."""
    print(text, file=sys.stderr, flush=True)


def emit_json(data: Any) -> None:
    """Data for programs, on stdout."""
    json.dump(data, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
    sys.stdout.flush()


def tail(text: str, n: int = 10, indent: str = "    ") -> str:
    lines = text.rstrip().splitlines()[-n:]
    return "\n".join(indent + x for x in lines)


def clock(ts: float, *, seconds: bool = False) -> str:
    """A moment as the lead reads it in messages and on the board: the local hour and minute (and second)."""
    return time.strftime("%H:%M:%S" if seconds else "%H:%M", time.localtime(float(ts)))
