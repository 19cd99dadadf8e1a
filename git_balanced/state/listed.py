"""A kind's refs as last listed, kept beside the state's cache (`.git/balanced/cache/<kind>.listed.json`): a reader
whose folder of refs has not changed since (Repo.refs_stamp: the folder's time and packed-refs') takes that list
instead of reading every ref's file again, which for 10,000 done jobs is most of what the board would cost.

A list is kept only when its folder had not changed for a second before it was listed, as a writer in the same
clock tick as a look can leave the folder's time as it was; it names every ref and its tip, so whatever wrote
the cache meanwhile, an entry is still checked against its ref's tip. Deleting it is always safe.
"""

from __future__ import annotations

import os
import time

from git_balanced import process
from git_balanced.files import dumps, loads, read_cache, write_json  # json's, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.state.cachefile import Kept

SETTLED_AFTER = 1.0  # seconds a folder must have stayed unchanged before its listing is kept


def tips(repo: Repo, kind: str, cache_dir: str) -> dict[str, str]:
    """Every `refs/balanced/<kind>/*` with its tip, as `repo.list_refs` gives them: from the kept list while the
    folder is unchanged, else listed (and kept, when the folder has settled)."""
    prefix = f"refs/balanced/{kind}/"
    stamp = repo.refs_stamp(prefix)
    if stamp is None:
        return repo.list_refs(prefix)
    path = os.path.join(cache_dir, f"{kind}.listed.json")
    memo = process.part(Kept).listed
    held = memo.get(path)
    if held is not None and held[0] == stamp:
        return dict(held[1])
    found = _load(path, stamp)
    if found is not None:
        memo[path] = (stamp, found)
        return dict(found)
    settled = time.time() - stamp[0] / 1e9 > SETTLED_AFTER
    listed = repo.list_refs(prefix)
    if settled and repo.refs_stamp(prefix) == stamp:
        try:
            write_json(path, {"stamp": list(stamp), "tips": listed}, separators=(",", ":"))  # the stamp first
        except OSError:
            return listed
        memo[path] = (stamp, dict(listed))
    return listed


def _load(path: str, stamp: tuple[int, ...]) -> dict[str, str] | None:
    """The kept list when it was listed under `stamp`, else None (told from the file's first bytes, without
    parsing it: an engine whose writes change the folder looks often and finds another stamp)."""
    text = read_cache(path)
    if text is None or not text.startswith(_head(stamp)):
        return None
    try:
        held = loads(text)
    except ValueError:
        return None
    if not isinstance(held, dict) or held.get("stamp") != list(stamp) or not isinstance(held.get("tips"), dict):
        return None
    return held["tips"]


def _head(stamp: tuple[int, ...]) -> str:
    """How a list kept under `stamp` starts (write_json keeps the keys' order)."""
    return '{"stamp":' + dumps(list(stamp), separators=(",", ":")) + ","
