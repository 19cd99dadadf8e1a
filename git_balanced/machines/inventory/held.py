"""Machines held because SSH refused to log in (a key, a changed host key): per repository, until the machine
answers again. A held machine's running workers are left running (never counted lost), nothing new is placed
there, and the lead hears once what to fix; once it answers, the hold moves to `cleared` for the lead to hear
that too (kept an hour)."""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced.files import Flock, loads, write_json  # json.loads' answer, without json (and re)
from git_balanced.git import Repo

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

CLEARED_KEPT = 3600.0


def _path(repo: Repo) -> Path:
    return repo.state_dir / "held.json"


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {"held": {}, "cleared": {}}
    if not isinstance(data, dict):
        return {"held": {}, "cleared": {}}
    return {k: v if isinstance(v := data.get(k), dict) else {} for k in ("held", "cleared")}


def held(repo: Repo) -> dict[str, dict[str, Any]]:
    """The machines held now: name -> {"kind", "detail", "fix", "words", "since"}."""
    return _load(_path(repo))["held"]


def cleared(repo: Repo) -> dict[str, dict[str, Any]]:
    """The holds that ended within the hour: name -> {"since", "at"}."""
    return _load(_path(repo))["cleared"]


def hold(repo: Repo, machine: str, kind: str, detail: str, fix: str, words: str) -> bool:
    """Hold `machine` (a hold already there keeps its `since`); True when it was not held before."""
    path = _path(repo)
    with Flock(f"{path}.lock"):
        data = _load(path)
        before = data["held"].get(machine)
        since = before["since"] if before and before.get("kind") == kind else time.time()
        data["held"][machine] = {"kind": kind, "detail": detail, "fix": fix, "words": words, "since": since}
        write_json(path, data, indent=1, sort_keys=True)
    return before is None


def release(repo: Repo, machine: str) -> bool:
    """The machine answered: its hold ends (kept under `cleared` for the lead to hear); True when it was held."""
    path = _path(repo)
    if machine not in held(repo):  # the common case, read without the lock
        return False
    with Flock(f"{path}.lock"):
        data = _load(path)
        gone = data["held"].pop(machine, None)
        if gone is None:
            return False
        now = time.time()
        data["cleared"] = {m: c for m, c in data["cleared"].items() if now - float(c.get("at", 0)) < CLEARED_KEPT}
        data["cleared"][machine] = {"since": gone.get("since", now), "at": now}
        write_json(path, data, indent=1, sort_keys=True)
    return True


def why(h: dict[str, Any]) -> str:
    """`held: SSH refused its key (…): run `ssh-add …`; …`, the words placement and `machines` show."""
    return (f"held: {h.get('words') or h.get('detail')}; its workers there are left running and nothing new "
            "goes there until it answers again")


def words(machine: str, h: dict[str, Any]) -> str:
    """`alpha is held: …`, as the lead hears it."""
    return f"{machine} is {why(h)}"
