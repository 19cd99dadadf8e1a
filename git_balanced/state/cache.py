"""Folded states cached in `.git/balanced/cache/`, keyed by (ref, tip): an entry can never be stale."""

from __future__ import annotations

import json
import os
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.files import write_json
from git_balanced.git import Repo
from git_balanced.state import health
from git_balanced.state.fold import RANKS, fold


def _path(repo: Repo, kind: str) -> str:
    d = repo.state_dir / "cache"
    d.mkdir(exist_ok=True)
    return str(d / f"{kind}.json")


# The cache file as this process last read or wrote it, by path and (mtime, size): an engine reads every
# job several times a pass, and parsing 10,000 jobs' JSON each time would be most of its cost.
_MEMO: dict[str, tuple[tuple[int, int], dict[str, list[Any]]]] = {}

# Malformed refs this process met, by (ref, tip), with why: read once, not on every pass.
_BROKEN: dict[tuple[str, str], str] = {}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _load(path: str) -> dict[str, list[Any]]:
    stamp = _stamp(path)
    memo = _MEMO.get(path)
    if stamp is not None and memo is not None and memo[0] == stamp:
        return memo[1]
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data = data if isinstance(data, dict) else {}
    except (FileNotFoundError, ValueError):
        return {}
    if stamp is not None:
        _MEMO[path] = (stamp, data)
    return data


def _save(path: str, data: dict[str, list[Any]]) -> None:
    write_json(path, data, separators=(",", ":"))
    stamp = _stamp(path)
    if stamp is not None:
        _MEMO[path] = (stamp, data)


def read_all(repo: Repo, kind: str, *, use_cache: bool = True) -> dict[str, dict[str, Any]]:
    """Every `refs/balanced/<kind>/*` folded, by name: one ref listing, folds only for changed tips."""
    prefix = f"refs/balanced/{kind}/"
    tips = repo.list_refs(prefix)
    path = _path(repo, kind)
    cached = _load(path) if use_cache else {}
    rank = RANKS.get(kind)
    out: dict[str, dict[str, Any]] = {}
    fresh: dict[str, list[Any]] = {}
    changed = False
    for ref, tip in tips.items():
        entry = cached.get(ref)
        if entry and entry[0] == tip:
            state = entry[1]
        else:
            broken = _BROKEN.get((ref, tip))
            events, why = ([], broken) if broken else health.chain_of(repo, kind, ref[len(prefix):], tip)
            if why:
                # One malformed ref must not stop the readers of every other: it is skipped and named once.
                _BROKEN[(ref, tip)] = why
                health.found(repo, ref, tip, why)
                continue
            state = fold(events, rank, owners=kind == "jobs")
            changed = True
        fresh[ref] = [tip, state]
        out[ref[len(prefix):]] = state
    if use_cache and (changed or len(cached) != len(fresh)):
        _save(path, fresh)
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
