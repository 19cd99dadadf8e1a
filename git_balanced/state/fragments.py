"""Text made from refs' states, kept by (ref, key) beside the cache (`.git/balanced/cache/<kind>.<part>.txt`): the
board's rows of done jobs as `board --json` lays them out, each with a few of its fields (`meta`). A reader takes a
row's text as it is, without parsing it: the file's first line is JSON, `{"format", "entries"}`, each entry
`[ref, key, start, end, meta]`, and the texts follow it, one after another (`start` and `end` count characters
from the end of the first line). The file is written whole, at once, when an entry changed; a file that is not of this
shape reads as empty (every text made again). Deleting it is always safe.
"""

from __future__ import annotations

import json
import os
from typing import Any

from git_balanced import process
from git_balanced.files import write_atomic

FORMAT = "1"

Entry = tuple[str, Any, str]  # (key, meta, text)


class Memo:
    """The files this process read or wrote (a part of process.py), by path: (size and mtime, entries)."""

    def __init__(self) -> None:
        self.held: dict[str, tuple[tuple[int, int], dict[str, Entry]]] = {}


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def load(path: str) -> dict[str, Entry]:
    """Every entry of the file at `path`, by ref: {} when there is none or it is not of the shape written."""
    stamp = _stat(path)
    memo = process.part(Memo).held
    if stamp is None:
        return {}
    held = memo.get(path)
    if held is not None and held[0] == stamp:
        return held[1]
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        head = json.loads(text[: text.index("\n")])
    except (OSError, ValueError):
        return {}
    out: dict[str, Entry] = {}
    if not isinstance(head, dict) or head.get("format") != FORMAT or not isinstance(head.get("entries"), list):
        return {}
    base = text.index("\n") + 1  # the texts start after the head's line; offsets count from there
    size = len(text) - base
    for item in head["entries"]:
        try:
            ref, key, start, end, meta = item
        except (TypeError, ValueError):
            return {}
        if not (isinstance(ref, str) and isinstance(key, str) and type(start) is int and type(end) is int
                and 0 <= start <= end <= size):
            return {}
        out[ref] = (key, meta, text[base + start:base + end])
    memo[path] = (stamp, out)
    return out


def save(path: str, entries: dict[str, Entry]) -> None:
    """Write `entries` (every one: the file is replaced whole)."""
    listed = []
    texts = []
    at = 0
    for ref, (key, meta, text) in entries.items():
        listed.append([ref, key, at, at + len(text), meta])
        texts.append(text)
        at += len(text)
    head = json.dumps({"format": FORMAT, "entries": listed}, separators=(",", ":"), ensure_ascii=False)
    write_atomic(path, head + "\n" + "".join(texts))  # JSON writes no newline of its own: the first ends the head
    stamp = _stat(path)
    if stamp is not None:
        process.part(Memo).held[path] = (stamp, dict(entries))
