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
    """Data for programs, on stdout, in one write."""
    sys.stdout.write(dumps(data) + "\n")
    sys.stdout.flush()


_FLAT = (str, int, float, bool, type(None))


def _flat(values: Any) -> bool:
    """Whether every value is a scalar or an empty container: laid out the same by json's C encoder."""
    return all(isinstance(v, _FLAT) or (isinstance(v, (dict, list, tuple)) and not v) for v in values)


def dumps(data: Any, level: int = 0) -> str:
    """`json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)`, to the byte.

    With `indent`, json encodes in pure Python, which for the board's 10,000 jobs costs more than all the rest
    of the board: here each container of scalars (a job's row) goes through the C encoder, its items separated
    by the newline and indent that `indent=2` would put there, and only the nesting is done in Python."""
    if not isinstance(data, (dict, list, tuple)) or not data:
        return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    pad, inner = "  " * level, "  " * (level + 1)
    is_dict = isinstance(data, dict)
    if is_dict and not all(isinstance(k, str) for k in data):
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str).replace("\n", "\n" + pad)
    open_, close = ("{", "}") if is_dict else ("[", "]")
    if _flat(data.values() if isinstance(data, dict) else data):
        body = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str, separators=(",\n" + inner, ": "))
        return f"{open_}\n{inner}{body[1:-1]}\n{pad}{close}"
    if is_dict:
        items = [f"{json.dumps(k, ensure_ascii=False)}: {dumps(data[k], level + 1)}" for k in sorted(data)]
    else:
        items = [dumps(v, level + 1) for v in data]
    return f"{open_}\n{inner}" + f",\n{inner}".join(items) + f"\n{pad}{close}"


def tail(text: str, n: int = 10, indent: str = "    ") -> str:
    lines = text.rstrip().splitlines()[-n:]
    return "\n".join(indent + x for x in lines)


def clock(ts: float, *, seconds: bool = False) -> str:
    """A moment as the lead reads it in messages and on the board: the local hour and minute (and second)."""
    return time.strftime("%H:%M:%S" if seconds else "%H:%M", time.localtime(float(ts)))
