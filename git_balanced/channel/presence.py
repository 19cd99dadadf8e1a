"""Whether the lead of a branch can answer its workers now: a headless lead whose driver runs (and is not
paused for its plan's usage limit), or an agent session of the lead seen lately (its hooks and its tool calls
mark it seen). Where a lead agent was known and none can answer, a worker's question comes to you at once.
"""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced.channel import names
from git_balanced.channel.names import inbox_ref  # not channel.inbox: the board reads no inbox
from git_balanced.files import loads  # json.loads' answer, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.shipped import pids
from git_balanced.vocab import LeadState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

HEADLESS_ENV = names.HEADLESS_ENV  # set for a headless lead's agent: its tool calls are not a session's
SEEN = names.SEEN  # the file whose time says when a session of the lead was last seen


def lead_dir(repo: Repo, branch: str) -> Path:
    """The folder a lead's own records live in: `.git/balanced/lead/<branch>/`."""
    d = repo.state_dir / "lead" / inbox_ref(branch)[len("refs/balanced/inbox/"):]
    d.mkdir(parents=True, exist_ok=True)
    return d


def headless_record(repo: Repo, branch: str) -> dict[str, Any] | None:
    """The headless lead's record of this branch, or None when none was started."""
    try:
        rec = loads((lead_dir(repo, branch) / "lead.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def pid_alive(pid: Any, tick: Any = "") -> bool:
    """Whether the process `pid` (a driver this user started) still runs: shipped/pids.py's check, where a pid
    that is another user's now counts as gone, and, given its start `tick`, one that a later process got too."""
    return pids.alive(pid, str(tick or ""), mine=True)


def driver_alive(rec: dict[str, Any] | None) -> bool:
    """Whether the driver a headless lead's or the chief's record names (`pid`, and `tick` since 5 December
    2026) still runs."""
    return bool(rec) and pid_alive((rec or {}).get("pid"), (rec or {}).get("tick"))


def driver(pid: int) -> dict[str, Any]:
    """What a record keeps of the driver `pid` it started: its pid and start tick."""
    return {"pid": pid, "tick": pids.start_tick(pid)}


def mark_seen(repo: Repo, branch: str) -> None:
    """Note that a session of the lead of `branch` acts now (a hook of it ran, or it called a tool)."""
    names.mark_seen_in(str(repo.state_dir), branch)


def seen_at(repo: Repo, branch: str) -> float | None:
    """When a session of the lead was last seen, or None when never."""
    try:
        return (lead_dir(repo, branch) / SEEN).stat().st_mtime
    except FileNotFoundError:
        return None


def cannot_answer(repo: Repo, branch: str, within: float) -> str | None:
    """Why the lead of `branch` cannot answer a worker now, or None when it can, or when no lead agent was
    ever known here (then whoever reads the inbox is the lead, as ever)."""
    rec = headless_record(repo, branch)
    seen = seen_at(repo, branch)
    if rec is None and seen is None:
        return None
    if rec is not None and driver_alive(rec):
        return "its lead is paused for its plan's usage limit" if rec.get("state") == LeadState.PAUSED else None
    if seen is not None and time.time() - seen <= within:
        return None
    return "its lead is not running"


# -- the chief ---------------------------------------------------------------------------------------------
CHIEF_SEEN = "chief-seen"  # the file whose time says when the chief last looked at this repository
CHIEF_GONE_AFTER = 120.0  # seconds without a look after which the chief is taken not to be running


def mark_chief_seen(repo: Repo) -> None:
    """Note that a running chief looks at this repository now (it does every few seconds)."""
    (repo.state_dir / CHIEF_SEEN).write_text(f"{time.time()!r}\n")


def chief_here(repo: Repo) -> bool:
    """Whether a chief runs over this repository: it looked at it within CHIEF_GONE_AFTER seconds."""
    try:
        return time.time() - (repo.state_dir / CHIEF_SEEN).stat().st_mtime <= CHIEF_GONE_AFTER
    except FileNotFoundError:
        return False
