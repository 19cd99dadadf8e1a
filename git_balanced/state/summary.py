"""Plans wholly done, each as one summary, kept beside the cache (`.git/balanced/cache/jobs.summary.json`): a
reader that shows such a plan's jobs only as counts (the board as it prints) reads that file, which holds the
states of every other job and plan and one summary per plan wholly done, rather than every job's brief.

The file is keyed by the stamps of the folders of job and plan refs (Repo.refs_stamp: the folder's time and
packed-refs'), and by what made the summaries (`made_by`). While no job or plan ref was written, made or removed
since, it is what `state/cache.read_live` would read; any other look reads the state as `read_live` does, and keeps
the file again when both folders had not changed for a second before it looked (a write in the same clock tick as
a look can leave a folder's time as it was). Deleting it is always safe.
"""

from __future__ import annotations

import os
import time

from git_balanced.files import loads, read_cache, write_json
from git_balanced.git import Repo
from git_balanced.state import cache, listed

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # What a plan wholly done is summed up as, made by the reader from the plan's state and its jobs' briefs (by id, in
    # the order read_live gives them): (its summary, what a reader of every job wants of them besides: `detail`), or
    # None when it is not summed up (its jobs are then read one by one).
    Make = Callable[[str, dict[str, Any], dict[str, dict[str, Any]]], "tuple[Any, Any] | None"]

FORMAT = "1"  # what the file holds: made again when this changes
SETTLED_AFTER = 1.0  # seconds both folders must have stayed unchanged before the file is kept
FOLDERS = ("refs/balanced/jobs/", "refs/balanced/plans/")


class Read:
    """What the file holds: every plan's state (a summed-up plan's brief without its pieces), the states of the
    jobs not summed up (the live ones whole, the others as briefs), each summed-up plan's summary, and, when asked
    for, each one's detail (kept in a file of its own, `jobs.summary.detail.json`, under the same key)."""

    __slots__ = ("detail", "jobs", "plans", "sigs", "summaries")

    def __init__(self, plans: dict[str, dict[str, Any]], jobs: dict[str, dict[str, Any]],
                 summaries: dict[str, Any], detail: dict[str, Any] | None = None) -> None:
        self.plans, self.jobs, self.summaries, self.detail = plans, jobs, summaries, detail
        self.sigs: dict[str, str] = {}  # each summed-up plan's signature, as made (state/summary._signature)


def read(repo: Repo, make: Make, made_by: str, *, detail: bool = False,
         valid: Callable[[dict[str, Any], dict[str, Any] | None], bool] | None = None) -> Read:
    """The state as `cache.read_live` reads it, each plan wholly done (settled, with jobs, every one settled) for
    which `make` makes a summary as that summary in place of its jobs (with each one's detail, when asked): from
    the kept files while no job or plan ref changed since they were made (and `valid` takes what they hold),
    else read and summed up again (and kept, when the folders have settled)."""
    stamps = [repo.refs_stamp(folder) for folder in FOLDERS]
    if any(s is None for s in stamps):  # a reftable, or no refs yet: nothing to key a file by
        return _made(repo, make)
    key = f"{FORMAT} {cache.FORMAT} {made_by} {stamps}"
    path = os.path.join(os.path.dirname(cache.cache_path(repo, "jobs")), "jobs.summary.json")
    main = _file(path)  # each file read once: for its key's answer, and else for the plans still summed up alike
    held = _parts(main, key, ("plans", "jobs", "summaries"))
    side = _file(_detail(path)) if detail or held is None else None
    more = _parts(side, key, ("detail",)) if detail and held is not None else None
    if held is not None and (not detail or (more is not None and set(more[0]) == set(held[2]))) and \
            (valid is None or valid(held[2], more[0] if more else None)):
        return Read(held[0], held[1], held[2], more[0] if more else None)
    settled = all(time.time() - s[0] / 1e9 > SETTLED_AFTER for s in stamps if s)
    code = f"{FORMAT} {cache.FORMAT} {made_by}"
    out = _made(repo, make, code, _before(main, side if side is not None else _file(_detail(path)), valid))
    if settled and [repo.refs_stamp(folder) for folder in FOLDERS] == stamps:
        try:  # the detail first: a summary found kept has its detail beside it, unless a writer raced this one
            write_json(_detail(path), {"key": key, "detail": out.detail}, separators=(",", ":"))
            write_json(path, {"key": key, "plans": out.plans, "jobs": out.jobs, "summaries": out.summaries,
                              "sigs": out.sigs}, separators=(",", ":"))
        except OSError:
            pass
    return out


def _before(main: dict[str, Any] | None, side: dict[str, Any] | None,
            valid: Callable[[dict[str, Any], dict[str, Any] | None], bool] | None) -> dict[str, tuple[str, Any, Any]]:
    """Each plan summed up in the kept files (`main`, and `side` its detail's), whatever their key: (its signature,
    its summary, its detail), for a plan whose signature is still its own to be taken rather than summed up
    again."""
    held = _parts(main, "", ("summaries", "sigs"), any_key=True)
    more = _parts(side, "", ("detail",), any_key=True)
    if held is None or more is None:
        return {}
    out = {}
    for pid, sig in held[1].items():
        if isinstance(sig, str) and pid in held[0] and pid in more[0] and \
                (valid is None or valid({pid: held[0][pid]}, {pid: more[0][pid]})):
            out[pid] = (sig, held[0][pid], more[0][pid])
    return out


def _detail(path: str) -> str:
    return path[: -len(".json")] + ".detail.json"


def _file(path: str) -> dict[str, Any] | None:
    """The kept file at `path`, parsed, when it is a JSON object; else None."""
    text = read_cache(path)
    if text is None:
        return None
    try:
        held = loads(text)
    except ValueError:
        return None
    return held if isinstance(held, dict) else None


def _parts(held: dict[str, Any] | None, key: str, parts: tuple[str, ...], any_key: bool = False
           ) -> list[dict[str, Any]] | None:
    """The `parts` of a kept file's object when it was made under `key` (or under any, with `any_key`; each a
    dict), else None."""
    if held is None or (held.get("key") != key and not any_key):
        return None
    out = [p for p in (held.get(part) for part in parts) if isinstance(p, dict)]
    return out if len(out) == len(parts) else None


def _made(repo: Repo, make: Make, code: str = "", before: dict[str, tuple[str, Any, Any]] | None = None) -> Read:
    """The state read as `read_live` reads it, and each plan wholly done summed up: taken from `before` when its
    signature there is the one it has now (what sums it, `code`, its ref's tip and its jobs' refs and tips)."""
    plans = cache.read_live(repo, "plans")
    jobs = cache.read_live(repo, "jobs")
    folder = os.path.dirname(cache.cache_path(repo, "jobs"))
    tips = {kind: listed.tips(repo, kind, folder) for kind in ("plans", "jobs")}
    of_plan: dict[str, dict[str, dict[str, Any]]] = {}
    for jid, st in jobs.items():
        of_plan.setdefault(str(st["fields"].get("plan") or ""), {})[jid] = st
    summaries: dict[str, Any] = {}
    detail: dict[str, Any] = {}
    sigs: dict[str, str] = {}
    for pid, mine in of_plan.items():
        plan = plans.get(pid)
        if plan is None or plan["state"] not in cache.SETTLED["plans"] or \
                not all(st["state"] in cache.SETTLED["jobs"] for st in mine.values()):
            continue  # read as briefs, or whole where read_live read every chain (a tip it held not)
        sig = _signature(code, pid, tips, mine)
        held = (before or {}).get(pid)
        made = (held[1], held[2]) if held is not None and held[0] == sig else make(pid, plan, mine)
        if made is None:
            continue
        summaries[pid], detail[pid] = made
        sigs[pid] = sig
        plans[pid] = {**plan, "fields": {k: v for k, v in plan["fields"].items() if k != "pieces"}}
        for jid in mine:
            del jobs[jid]
    out = Read(plans, jobs, summaries, detail)
    out.sigs = sigs
    return out


def _signature(code: str, pid: str, tips: dict[str, dict[str, str]], mine: dict[str, Any]) -> str:
    """What a plan's summary is made from, hashed: the code that sums, the plan's ref's tip, its jobs' refs and tips."""
    import hashlib

    jobs = tips["jobs"]
    text = "\n".join([code, pid, tips["plans"].get(f"refs/balanced/plans/{pid}", ""),
                      *(f"{jid} {jobs.get('refs/balanced/jobs/' + jid, '')}" for jid in mine)])
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()
