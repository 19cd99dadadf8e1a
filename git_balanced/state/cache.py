"""Folded states cached in `.git/balanced/cache/`, keyed by (ref, tip): an entry can never be stale.

A kind's cache is a file, `<kind>.json`, with its journal (state/cachefile.py); for jobs and plans, the settled
ones (done) are kept apart, in full in `<kind>.done.json` and briefly in `<kind>.brief.json`, so that a reader of
what is live (the board) parses only what is live and the briefs.
"""

from __future__ import annotations

import os

from git_balanced import process
from git_balanced.files import write_atomic
from git_balanced.git import Repo
from git_balanced.state import listed
from git_balanced.state.cachefile import Entries, Kept
from git_balanced.state.cachefile import load as _load
from git_balanced.state.cachefile import save as _save
from git_balanced.vocab import DONE

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

# Not imported here: state/health.py (a ref's chain read and checked) and state/fold.py, which a fold alone needs;
# a reader whose every entry is cached (the board, the inbox) loads neither, nor the events' and refs' modules.

# What the folds in the cache were checked for: a cache written before (folds of events whose fields were never
# checked for their types) is dropped once, as an entry is trusted for as long as its ref's tip stays.
FORMAT = "5"  # 3: every field of a job and a plan checked (state/shapes.py); 4: what is settled kept apart; 5: briefs
# that name a worker (its machine, its lead, its plan's pieces' ids in order), so handles are made from briefs

# The states after which nothing more happens to a chain of a kind (a done job, a done plan): such entries are kept
# apart from the live ones, in `<kind>.done.json`, and, briefly, in `<kind>.brief.json`, so that a reader of what
# is live (`read_live`) parses only what is live and the briefs, never every settled chain in full.
SETTLED: dict[str, frozenset[str]] = {"jobs": DONE, "plans": frozenset(("done", "cancelled"))}
# What a brief keeps of a settled chain's fields: what the board counts, sums and sorts them by.
BRIEF: dict[str, tuple[str, ...]] = {
    "jobs": ("plan", "piece", "attempt", "cost_usd", "spent_before", "dismissed", "machine", "lead"),
    "plans": ("task", "lead", "budget_usd", "pieces")}
# What a plan's brief keeps of each of its pieces: its id and place, in order (what a worker's handle is made of).
BRIEF_PIECE = ("id", "placed")


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


def cache_path(repo: Repo, kind: str) -> str:
    """The cache file of `kind` (`.git/balanced/cache/<kind>.json`), its folder made and checked."""
    return _path(repo, kind)


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
    kept = {k: fields[k] for k in BRIEF[kind] if k in fields}
    if isinstance(kept.get("pieces"), list):
        kept["pieces"] = [{k: p[k] for k in BRIEF_PIECE if k in p} for p in kept["pieces"] if isinstance(p, dict)]
    return {**state, "fields": kept, "brief": True}


def _cached(path: str, kind: str) -> Entries:
    """Every entry the cache of `kind` holds, live and settled: the two files' entries merged once, and again only
    when either file's entries changed (cachefile.load hands back the same dict while a file is unchanged)."""
    if kind not in SETTLED:
        return _load(path)
    live, done = _load(path), _load(_apart(path, "done"))
    if not done:  # nothing settled yet (its file not written): the live entries are all of them
        return live
    merged = process.part(Kept).merged
    held = merged.get(path)
    if held is not None and held[0] is live and held[1] is done:
        return held[2]
    both = {**live, **done}
    merged[path] = (live, done, both)
    return both


def _store(path: str, kind: str, fresh: Entries, changed: list[str]) -> None:
    """Save `fresh` (every entry), the live and the settled ones each in their file (a ref that moved from one
    to the other is written as gone from the first), with the settled ones' briefs. A file none of whose entries
    changed is not written (a running job's new event touches the live file alone)."""
    if kind not in SETTLED:
        _save(path, fresh, changed)
        return
    settled = SETTLED[kind]
    files = [path, _apart(path, "done"), _apart(path, "brief")]
    live, done, briefs = (dict(_load(f)) for f in files)
    touched: tuple[list[str], list[str], list[str]] = ([], [], [])
    for ref in changed:  # only these differ from what the files hold
        entry = fresh.get(ref)
        for held, hit in zip((live, done, briefs), touched, strict=True):
            if held.pop(ref, None) is not None:
                hit.append(ref)
        if entry is None:
            continue
        if entry[1]["state"] in settled:
            done[ref] = entry
            briefs[ref] = [entry[0], _brief(kind, entry[1])]
            touched[1].append(ref)
            touched[2].append(ref)
        else:
            live[ref] = entry
            touched[0].append(ref)
    for f, held, hit in zip(files, (live, done, briefs), touched, strict=True):
        if hit:
            _save(f, held, list(dict.fromkeys(hit)))


def _fold(repo: Repo, kind: str, prefix: str, ref: str, tip: str) -> dict[str, Any] | None:
    """The folded state of `ref` at `tip`; None (named once) when the ref is malformed."""
    from git_balanced.state import health
    from git_balanced.state.fold import RANKS, fold

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
    path = _path(repo, kind)
    tips = listed.tips(repo, kind, os.path.dirname(path)) if use_cache else repo.list_refs(prefix)
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
    path = _path(repo, kind)
    tips = listed.tips(repo, kind, os.path.dirname(path))
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
    """The refs `names` folded in full, as they are now: for the few settled ones a reader of briefs shows whole
    (the failures that wait on you). Kept by (ref, tip) in `<kind>.whole.json`, which holds what was asked the
    last time and nothing else (a few entries), so that the next look reads no chain from git's objects; a ref
    whose tip that file does not hold is folded from its chain. A ref that is gone or malformed is left out."""
    prefix = f"refs/balanced/{kind}/"
    path = _apart(_path(repo, kind), "whole")
    kept = _load(path)
    out = {}
    fresh: Entries = {}
    for name in names:
        ref = prefix + name
        tip = repo.read_ref(ref)
        entry = kept.get(ref)
        state = entry[1] if entry and entry[0] == tip else _fold(repo, kind, prefix, ref, tip) if tip else None
        if state is not None:
            out[name] = state
            fresh[ref] = [tip, state]
    changed = [ref for ref in fresh if kept.get(ref, [None])[0] != fresh[ref][0]] + \
        [ref for ref in kept if ref not in fresh]
    if changed:
        _save(path, fresh, changed)
    return out


def fragments(repo: Repo, kind: str, part: str, names: Iterable[str],
              make: Callable[[str, dict[str, Any]], tuple[Any, str]], stamp: str = "",
              valid: Callable[[Any], bool] | None = None, again: set[str] | None = None
              ) -> dict[str, tuple[Any, str]]:
    """What `make(name, state)` makes of each of the refs `names` in full, `(meta, text)` (the board's row of a done
    job: a few of its fields, and its JSON text), kept by (ref, tip) in `<kind>.<part>.txt`, made by `stamp` (what
    makes them: state/fragments.py): a reader takes the text as it is, and only a ref whose tip is not held (or the
    file's `stamp` not this one) is made again, from `read_all`, as is one whose `meta` `valid` refuses and one
    named in `again`. A ref that is gone is left out, and dropped from the file."""
    from git_balanced.state import fragments as kept_text

    prefix = f"refs/balanced/{kind}/"
    path = _path(repo, kind)
    tips = listed.tips(repo, kind, os.path.dirname(path))
    where = _apart(path, part)[: -len(".json")] + ".txt"
    held = kept_text.load(where, stamp)
    out: dict[str, tuple[Any, str]] = {}
    missing = []
    for name in names:
        ref = prefix + name
        tip = tips.get(ref)
        entry = held.get(ref)
        if tip is None:
            continue
        if entry is not None and entry[0] == tip and (valid is None or valid(entry[1])) and \
                (again is None or name not in again):
            out[name] = (entry[1], entry[2])
        else:
            missing.append(name)
    if not missing and all(ref in tips for ref in held):
        return out
    states = read_all(repo, kind) if missing else {}
    fresh = {ref: entry for ref, entry in held.items() if ref in tips}
    for name in missing:
        state = states.get(name)
        if state is not None:
            meta, text = out[name] = make(name, state)
            fresh[prefix + name] = (tips[prefix + name], meta, text)
    kept_text.save(where, fresh, stamp)
    if not held:  # the first write of this file: what the JSON layout before it left goes
        for old in (_apart(path, part), _apart(path, part)[: -len(".json")] + ".log"):
            try:
                os.unlink(old)
            except FileNotFoundError:
                pass
    return out


def read_one(repo: Repo, kind: str, name: str) -> dict[str, Any] | None:
    """One folded state, or None when there is no such ref."""
    from git_balanced.errors import BalancedError
    from git_balanced.state import health
    from git_balanced.state.fold import RANKS, fold

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
