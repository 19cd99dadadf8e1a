"""One cache file of folded states and its journal (state/cache.py keeps one per kind of ref, and part).

A cache file is a snapshot, `<name>.json` (`{ref: [tip, state]}`), and a journal of what changed since,
`<name>.log`: its first line names the snapshot it follows (inode, mtime, size), each other line is one
entry, `[ref, tip, state]`, or `[ref, null]` for a ref that is gone. A save appends only the entries that
changed, in one write; once the journal outgrows half the snapshot, the whole is written again and the
journal starts over. A journal line lost to a race (two writers, one of them starting a new journal) costs
a fold on the next read, never a wrong answer, since every entry is checked against its ref's tip.
"""

from __future__ import annotations

import os
import stat

from git_balanced import process
from git_balanced.files import dumps, loads, read_cache, write_atomic, write_json  # json's, without json

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

Entries = dict[str, list["Any"]]  # ref -> [tip, folded state]
Stamp = tuple[int, int, int]  # (inode, mtime in ns, size)

# A journal is written whole again once it is larger than this share of its snapshot (and this floor).
JOURNAL_SHARE = 0.5
JOURNAL_FLOOR = 64 << 10


def _journal(path: str) -> str:
    return path[: -len(".json")] + ".log"


class _Memo:
    """A cache file as this process last read or wrote it: an engine reads every job several times a pass, and
    parsing 10,000 jobs' JSON each time would be most of its cost. The same state dict is handed back while its
    ref's tip is unchanged, so the typed views made from it (jobs.py) are made once per change."""

    def __init__(self, snapshot: Stamp, entries: Entries, journal: tuple[int, int]) -> None:
        self.snapshot = snapshot  # the snapshot file read
        self.entries = entries
        self.journal = journal  # (inode, bytes read) of its journal: (0, 0) when it has none
        self.count = len(entries)  # the entries its snapshot holds


class Kept:
    """What this process remembers of the caches (a part of process.py): forgotten, every file is read afresh."""

    def __init__(self) -> None:
        self.dirs: dict[str, str] = {}  # a repository's common folder -> its cache folder, known to exist
        self.memo: dict[str, _Memo] = {}  # a cache file's path -> as last read or written
        # Malformed refs this process met, by (ref, tip), with why: read once, not on every pass.
        self.broken: dict[tuple[str, str], str] = {}
        # A kind's live and settled entries merged (state/cache.py), with the two dicts it was made of.
        self.merged: dict[str, tuple[Entries, Entries, Entries]] = {}
        # A kind's refs as last listed (state/listed.py), by its file: the stamp they were listed under, and them.
        self.listed: dict[str, tuple[tuple[int, ...], dict[str, str]]] = {}


def _stamp(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _header(stamp: Stamp) -> bytes:
    return dumps({"snapshot": list(stamp)}).encode() + b"\n"


def _replay(entries: Entries, data: bytes) -> tuple[Entries, int]:
    """`entries` with the journal lines in `data` applied (a new dict when any applies), and how many bytes
    of whole lines were read. An entry whose tip is the one held keeps its state object."""
    end = data.rfind(b"\n") + 1
    out = entries
    for line in data[:end].splitlines():
        try:
            item = loads(line)
        except ValueError:
            continue
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            continue
        if out is entries:
            out = dict(entries)
        ref = item[0]
        if len(item) == 3 and isinstance(item[1], str):
            held = out.get(ref)
            if not (isinstance(held, list) and held and held[0] == item[1]):
                out[ref] = [item[1], item[2]]
        else:
            out.pop(ref, None)
    return out, end


def load(path: str) -> Entries:
    """The cache's entries: the snapshot once, then only what the journal gained since the last look."""
    stamp = _stamp(path)
    kept = process.part(Kept).memo
    if stamp is None:
        kept.pop(path, None)
        return {}
    memo = kept.get(path)
    if memo is None or memo.snapshot != stamp:
        text = read_cache(path)
        if text is None:
            return {}
        try:
            data = loads(text)
        except ValueError:
            return {}
        memo = _Memo(stamp, data if isinstance(data, dict) else {}, (0, 0))
        kept[path] = memo
    try:
        fd = os.open(_journal(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return memo.entries
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return memo.entries  # no journal of this code's (a FIFO would hang the read, a folder fail it)
        ino = st.st_ino
        if ino != memo.journal[0]:  # a journal not read yet: it counts only if it follows this snapshot
            head = b""
            while not head.endswith(b"\n") and len(head) < 200:
                chunk = os.pread(fd, 200, len(head))
                if not chunk:
                    break
                head += chunk
            head = head[: head.find(b"\n") + 1]
            if head != _header(stamp):
                return memo.entries
            memo.journal = (ino, len(head))
        tail = _read_from(fd, memo.journal[1])
    finally:
        os.close(fd)
    memo.entries, used = _replay(memo.entries, tail)
    memo.journal = (memo.journal[0], memo.journal[1] + used)
    return memo.entries


def _read_from(fd: int, offset: int) -> bytes:
    parts: list[bytes] = []
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        offset += len(chunk)


def save(path: str, fresh: Entries, changed: Iterable[str]) -> None:
    """Record `fresh`: the changed entries appended to the journal, or, when it has grown too long (or
    there is none to append to), a new snapshot and an empty journal; nothing when they cannot be written (a
    folder in their place: the look goes on without keeping them)."""
    kept = process.part(Kept).memo
    memo = kept.get(path)
    lines = b"".join(dumps([ref, *fresh[ref]] if ref in fresh else [ref, None],
                                separators=(",", ":")).encode() + b"\n" for ref in changed)
    # A snapshot most of whose entries are gone (what `gc` archived) is written again, not read and undone each time.
    if memo is not None and memo.journal[0] and len(fresh) * 2 >= memo.count and _append(path, memo, lines, fresh):
        return
    try:
        write_json(path, fresh, separators=(",", ":"))
        stamp = _stamp(path)
        if stamp is None:
            return
        write_atomic(_journal(path), _header(stamp).decode())
    except OSError:
        kept.pop(path, None)
        return
    ino = _stamp(_journal(path))
    kept[path] = _Memo(stamp, fresh, (ino[0], len(_header(stamp))) if ino else (0, 0))


def _append(path: str, memo: _Memo, lines: bytes, fresh: Entries) -> bool:
    """Append to the journal this process read; False when it is gone or is not the snapshot's any more."""
    if _stamp(path) != memo.snapshot:
        return False
    try:
        fd = os.open(_journal(path), os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        limit = max(JOURNAL_FLOOR, int(memo.snapshot[2] * JOURNAL_SHARE))
        if st.st_ino != memo.journal[0] or st.st_size + len(lines) > limit:
            return False
        os.write(fd, lines)
        end = os.fstat(fd).st_size
    finally:
        os.close(fd)
    memo.entries = fresh
    if end == st.st_size + len(lines) and st.st_size == memo.journal[1]:
        memo.journal = (memo.journal[0], end)  # nobody else wrote meanwhile: nothing to read back
    return True
