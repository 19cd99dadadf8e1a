"""Folded states cached in `.git/balanced/cache/`, keyed by (ref, tip): an entry can never be stale.

A kind's cache is a snapshot, `<kind>.json` (`{ref: [tip, state]}`), and a journal of what changed since,
`<kind>.log`: its first line names the snapshot it follows (inode, mtime, size), each other line is one
entry, `[ref, tip, state]`, or `[ref, null]` for a ref that is gone. A save appends only the entries that
changed, in one write; once the journal outgrows half the snapshot, the whole is written again and the
journal starts over. A journal line lost to a race (two writers, one of them starting a new journal) costs
a fold on the next read, never a wrong answer, since every entry is checked against its ref's tip.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.files import write_atomic, write_json
from git_balanced.git import Repo
from git_balanced.state import health
from git_balanced.state.fold import RANKS, fold
from git_balanced.vocab import DONE

Entries = dict[str, list[Any]]  # ref -> [tip, folded state]
Stamp = tuple[int, int, int]  # (inode, mtime in ns, size)

# A journal is written whole again once it is larger than this share of its snapshot (and this floor).
JOURNAL_SHARE = 0.5
JOURNAL_FLOOR = 64 << 10


# What the folds in the cache were checked for: a cache written before (folds of events whose fields were never
# checked for their types) is dropped once, as an entry is trusted for as long as its ref's tip stays.
FORMAT = "4"  # 3: every field of a job and a plan checked (state/shapes.py); 4: what is settled kept apart

# The states after which nothing more happens to a chain of a kind (a done job, a done plan): such entries are kept
# apart from the live ones, in `<kind>.done.json`, and, briefly, in `<kind>.brief.json`, so that a reader of what
# is live (`read_live`) parses only what is live and the briefs, never every settled chain in full.
SETTLED: dict[str, frozenset[str]] = {"jobs": DONE, "plans": frozenset(("done", "cancelled"))}
# What a brief keeps of a settled chain's fields: what the board counts, sums and sorts them by.
BRIEF: dict[str, tuple[str, ...]] = {
    "jobs": ("plan", "piece", "attempt", "cost_usd", "spent_before", "dismissed"),
    "plans": ("task", "lead", "budget_usd")}


def _path(repo: Repo, kind: str) -> str:
    key = str(repo.common_dir)
    dirs = process.part(Kept).dirs
    d = dirs.get(key)
    if d is None or not os.path.isdir(d):  # a stat, rather than the two mkdirs of asking state_dir each time
        d = str(repo.state_dir / "cache")
        os.makedirs(d, exist_ok=True)
        _check_format(d)
        dirs[key] = d
    return os.path.join(d, f"{kind}.json")


def _check_format(d: str) -> None:
    """Empty the cache folder `d` when its folds were made by a version that checked less (deleting is safe)."""
    mark = os.path.join(d, "format")
    try:
        with open(mark, encoding="utf-8") as f:
            if f.read().strip() == FORMAT:
                return
    except FileNotFoundError:
        pass
    for name in os.listdir(d):
        if name.endswith((".json", ".log")):
            try:
                os.unlink(os.path.join(d, name))
            except FileNotFoundError:
                pass
    write_atomic(mark, FORMAT + "\n")


def _apart(path: str, part: str) -> str:
    """The file of `part` ("done", "brief") kept beside the cache file `path`."""
    return path[: -len(".json")] + f".{part}.json"


def _brief(kind: str, state: dict[str, Any]) -> dict[str, Any]:
    """A settled chain's state with only the fields BRIEF names, marked as a brief."""
    fields = state["fields"]
    return {**state, "fields": {k: fields[k] for k in BRIEF[kind] if k in fields}, "brief": True}


def _cached(path: str, kind: str) -> Entries:
    """Every entry the cache of `kind` holds, live and settled."""
    if kind not in SETTLED:
        return _load(path)
    return {**_load(path), **_load(_apart(path, "done"))}


def _store(path: str, kind: str, fresh: Entries, changed: list[str]) -> None:
    """Save `fresh` (every entry), the live and the settled ones each in their file (a ref that moved from one
    to the other is written as gone from the first), with the settled ones' briefs."""
    if kind not in SETTLED:
        _save(path, fresh, changed)
        return
    settled = SETTLED[kind]
    live, done = dict(_load(path)), dict(_load(_apart(path, "done")))
    briefs = dict(_load(_apart(path, "brief")))
    for ref in changed:  # only these differ from what the files hold
        entry = fresh.get(ref)
        for held in (live, done, briefs):
            held.pop(ref, None)
        if entry is None:
            continue
        if entry[1]["state"] in settled:
            done[ref] = entry
            briefs[ref] = [entry[0], _brief(kind, entry[1])]
        else:
            live[ref] = entry
    _save(path, live, changed)
    _save(_apart(path, "done"), done, changed)
    _save(_apart(path, "brief"), briefs, changed)


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


class Kept:
    """What this process remembers of the caches (a part of process.py): forgotten, every file is read afresh."""

    def __init__(self) -> None:
        self.dirs: dict[str, str] = {}  # a repository's common folder -> its cache folder, known to exist
        self.memo: dict[str, _Memo] = {}  # a cache file's path -> as last read or written
        # Malformed refs this process met, by (ref, tip), with why: read once, not on every pass.
        self.broken: dict[tuple[str, str], str] = {}


def _stamp(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _header(stamp: Stamp) -> bytes:
    return json.dumps({"snapshot": list(stamp)}).encode() + b"\n"


def _replay(entries: Entries, data: bytes) -> tuple[Entries, int]:
    """`entries` with the journal lines in `data` applied (a new dict when any applies), and how many bytes
    of whole lines were read. An entry whose tip is the one held keeps its state object."""
    end = data.rfind(b"\n") + 1
    out = entries
    for line in data[:end].splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            continue
        if out is entries:
            out = dict(entries)
        ref = item[0]
        if len(item) == 3 and isinstance(item[1], str):
            held = out.get(ref)
            if not (held and held[0] == item[1]):
                out[ref] = [item[1], item[2]]
        else:
            out.pop(ref, None)
    return out, end


def _load(path: str) -> Entries:
    """The cache's entries: the snapshot once, then only what the journal gained since the last look."""
    stamp = _stamp(path)
    kept = process.part(Kept).memo
    if stamp is None:
        kept.pop(path, None)
        return {}
    memo = kept.get(path)
    if memo is None or memo.snapshot != stamp:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (FileNotFoundError, ValueError):
            return {}
        memo = _Memo(stamp, data if isinstance(data, dict) else {}, (0, 0))
        kept[path] = memo
    try:
        fd = os.open(_journal(path), os.O_RDONLY)
    except FileNotFoundError:
        return memo.entries
    try:
        ino = os.fstat(fd).st_ino
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


def _save(path: str, fresh: Entries, changed: Iterable[str]) -> None:
    """Record `fresh`: the changed entries appended to the journal, or, when it has grown too long (or
    there is none to append to), a new snapshot and an empty journal."""
    kept = process.part(Kept).memo
    memo = kept.get(path)
    lines = b"".join(json.dumps([ref, *fresh[ref]] if ref in fresh else [ref, None],
                                separators=(",", ":")).encode() + b"\n" for ref in changed)
    if memo is not None and memo.journal[0] and _append(path, memo, lines, fresh):
        return
    write_json(path, fresh, separators=(",", ":"))
    stamp = _stamp(path)
    if stamp is None:
        return
    write_atomic(_journal(path), _header(stamp).decode())
    ino = _stamp(_journal(path))
    kept[path] = _Memo(stamp, fresh, (ino[0], len(_header(stamp))) if ino else (0, 0))


def _append(path: str, memo: _Memo, lines: bytes, fresh: Entries) -> bool:
    """Append to the journal this process read; False when it is gone or is not the snapshot's any more."""
    if _stamp(path) != memo.snapshot:
        return False
    try:
        fd = os.open(_journal(path), os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
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


def _fold(repo: Repo, kind: str, prefix: str, ref: str, tip: str) -> dict[str, Any] | None:
    """The folded state of `ref` at `tip`; None (named once) when the ref is malformed."""
    met = process.part(Kept).broken
    broken = met.get((ref, tip))
    events, why = ([], broken) if broken else health.chain_of(repo, kind, ref[len(prefix):], tip)
    if why:
        # One malformed ref must not stop the readers of every other: it is skipped and named once.
        met[(ref, tip)] = why
        health.found(repo, ref, tip, why)
        return None
    return fold(events, RANKS.get(kind), owners=kind == "jobs")


def read_all(repo: Repo, kind: str, *, use_cache: bool = True) -> dict[str, dict[str, Any]]:
    """Every `refs/balanced/<kind>/*` folded, by name: one ref listing, folds only for changed tips."""
    prefix = f"refs/balanced/{kind}/"
    tips = repo.list_refs(prefix)
    path = _path(repo, kind)
    cached = _cached(path, kind) if use_cache else {}
    out: dict[str, dict[str, Any]] = {}
    fresh: Entries = {}
    changed: list[str] = []
    for ref, tip in tips.items():
        entry = cached.get(ref)
        if entry and entry[0] == tip:
            fresh[ref] = entry
        else:
            state = _fold(repo, kind, prefix, ref, tip)
            if state is None:
                continue
            fresh[ref] = [tip, state]
            changed.append(ref)
        out[ref[len(prefix):]] = fresh[ref][1]
    gone = [ref for ref in cached if ref not in fresh]
    if use_cache and (changed or gone):
        _store(path, kind, fresh, changed + gone)
    return out


def read_written(repo: Repo, kind: str, names: Iterable[str]) -> dict[str, dict[str, Any] | None]:
    """The refs `names`, written by this process since its last `read_all`, read again: each one's state, or
    None when it is gone (or malformed). No ref listing, and a fold only for a tip the cache does not hold;
    what other processes wrote meanwhile, the next `read_all` finds."""
    prefix = f"refs/balanced/{kind}/"
    path = _path(repo, kind)
    cached = _cached(path, kind)
    fresh = dict(cached)
    out: dict[str, dict[str, Any] | None] = {}
    changed: list[str] = []
    for name in dict.fromkeys(names):
        ref = prefix + name
        tip = repo.read_ref(ref)
        entry = fresh.get(ref)
        if entry and entry[0] == tip:
            out[name] = entry[1]
            continue
        state = _fold(repo, kind, prefix, ref, tip) if tip else None
        out[name] = state
        if state is None:
            if fresh.pop(ref, None) is not None:
                changed.append(ref)
            continue
        fresh[ref] = [tip, state]
        changed.append(ref)
    if changed and cached:
        _store(path, kind, fresh, changed)
    return out


def read_live(repo: Repo, kind: str) -> dict[str, dict[str, Any]]:
    """Every `refs/balanced/<kind>/*` by name, as `read_all` gives them, but a settled one (SETTLED) as its brief
    (`"brief": True`, only the BRIEF fields): one ref listing, and only the live entries and the briefs parsed.
    When a ref's tip is one neither holds (it moved, or is new), every one is read as `read_all` reads them."""
    if kind not in SETTLED:
        return read_all(repo, kind)
    prefix = f"refs/balanced/{kind}/"
    tips = repo.list_refs(prefix)
    path = _path(repo, kind)
    live = _load(path)
    briefs = _load(_apart(path, "brief"))
    out: dict[str, dict[str, Any]] = {}
    for ref, tip in tips.items():
        entry = live.get(ref)
        if entry is None or entry[0] != tip:
            entry = briefs.get(ref)
            if entry is None or entry[0] != tip:
                return read_all(repo, kind)
        out[ref[len(prefix):]] = entry[1]
    return out


def fold_now(repo: Repo, kind: str, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The refs `names` folded in full, as they are now, without reading or writing the cache: for the few settled
    ones a reader of briefs shows whole. A ref that is gone or malformed is left out."""
    prefix = f"refs/balanced/{kind}/"
    out = {}
    for name in names:
        tip = repo.read_ref(prefix + name)
        state = _fold(repo, kind, prefix, prefix + name, tip) if tip else None
        if state is not None:
            out[name] = state
    return out


def read_one(repo: Repo, kind: str, name: str) -> dict[str, Any] | None:
    """One folded state, or None when there is no such ref."""
    ref = f"refs/balanced/{kind}/{name}"
    tip = repo.read_ref(ref)
    if tip is None:
        return None
    events, why = health.chain_of(repo, kind, name, tip)
    if why:
        broken = health.BrokenRef(ref, tip, why)
        raise BalancedError(f"{ref} is malformed ({why}).",
                            hint=f"`git balanced doctor --fix` removes it (or: {broken.fix}).")
    return fold(events, RANKS.get(kind), owners=kind == "jobs")
