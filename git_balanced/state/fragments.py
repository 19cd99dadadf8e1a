"""Text made from refs' states, kept by (ref, tip) beside the cache (`.git/balanced/cache/<kind>.<part>.txt`): the
board's rows of done jobs as `board --json` lays them out, each with a few of its fields (`meta`). A reader takes a
row's text as it is, without parsing it. The file's first line is JSON: `format`, `made_by` (what made every
entry: another reads the file as empty), and the entries in columns, `refs`, `keys` (each ref's tip), `ends`
(where each text ends, counted from the end of that line; each starts where the one before it ends) and `meta`;
the texts follow it, one after another. The file is written whole, at once, when an entry changed; a file that is
not of this shape reads as empty (every text made again). Deleting it is always safe.
"""

from __future__ import annotations

import itertools
import operator
import os

from git_balanced import process
from git_balanced.files import dumps, loads, read_cache, write_atomic

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

    Entry = tuple[str, Any, str]  # (key, meta, text)

FORMAT = "3"  # 2: the head in columns (refs, keys, ends, meta), each text ending where the next starts; 3: made_by



class Memo:
    """The files this process read or wrote (a part of process.py), by path: (its stamp, what made it, its entries)."""

    def __init__(self) -> None:
        self.held: dict[str, tuple[tuple[int, int], str, dict[str, Entry]]] = {}


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def load(path: str, made_by: str) -> dict[str, Entry]:
    """Every entry of the file at `path`, by ref, when what made them was `made_by`: {} when there is none, it is
    not of the shape written, or another made them."""
    stamp = _stat(path)
    memo = process.part(Memo).held
    if stamp is None:
        return {}
    held = memo.get(path)
    if held is not None and held[0] == stamp:
        return held[2] if held[1] == made_by else {}
    text = read_cache(path)
    if text is None:
        return {}
    try:
        base = text.index("\n") + 1  # the texts start after the head's line; offsets count from there
        head = loads(text[:base])
        refs, keys, ends, metas = (head[k] for k in ("refs", "keys", "ends", "meta"))
    except (OSError, ValueError, TypeError, KeyError):
        return {}
    # Checked whole, in C where it can be: a file not of this shape is read as empty.
    if head.get("format") != FORMAT or head.get("made_by") != made_by or \
            not all(isinstance(x, list) for x in (refs, keys, ends, metas)) or \
            not len(refs) == len(keys) == len(ends) == len(metas) or not _STR.issuperset(map(type, refs)) or \
            not _STR.issuperset(map(type, keys)) or not _INT.issuperset(map(type, ends)) or \
            not all(map(operator.le, [0, *ends], [*ends, len(text) - base])):
        return {}
    starts = map(base.__add__, [0, *ends[:-1]])
    texts = map(text.__getitem__, map(slice, starts, map(base.__add__, ends)))
    out: dict[str, Entry] = dict(zip(refs, zip(keys, metas, texts, strict=True), strict=True))
    memo[path] = (stamp, made_by, out)
    return out


def save(path: str, entries: dict[str, Entry], made_by: str) -> None:
    """Write `entries` (every one: the file is replaced whole), made by `made_by`; nothing when it cannot be
    written (a folder in its place: the look goes on without keeping them)."""
    refs, keys, metas, texts = [], [], [], []
    for ref, (key, meta, text) in entries.items():
        refs.append(ref)
        keys.append(key)
        metas.append(meta)
        texts.append(text)
    ends = list(itertools.accumulate(map(len, texts)))
    head = dumps({"format": FORMAT, "made_by": made_by, "refs": refs, "keys": keys, "ends": ends, "meta": metas},
                      separators=(",", ":"), ensure_ascii=False)
    try:
        write_atomic(path, head + "\n" + "".join(texts))  # JSON writes no newline of its own: the first ends the head
    except OSError:
        return
    stamp = _stat(path)
    if stamp is not None:
        process.part(Memo).held[path] = (stamp, made_by, dict(entries))


_STR = frozenset((str,))
_INT = frozenset((int,))
