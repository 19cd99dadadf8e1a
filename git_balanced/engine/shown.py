"""The board as `board --json` prints it and the board's app reads it: engine/board.collect, with each worker's
handle (`e3`) in its row, and whether an engine runs to move what waits."""

from __future__ import annotations

from git_balanced.channel.presence import pid_alive
from git_balanced.lead import Lead
from git_balanced.vocab import LIVE, JobState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

START = "git balanced engine --detach"
# How the board and its app show workers: past FOLD_AFTER, the done ones fold into one line of counts, in this
# order; each state's dot and its colour (a ring for finished and not landed, filled green for landed, red for
# what failed). Without colour (NO_COLOR, a plain terminal, `board`'s text) the dots alone tell them apart.
FOLD_AFTER = 5
FOLD_ORDER = (JobState.LANDED, JobState.REPORTED, JobState.FAILED, JobState.STOPPED, JobState.RETRIED, JobState.LOST)
DOTS: dict[str, tuple[str, str]] = {
    JobState.QUEUED: ("◌", "grey62"), JobState.RUNNING: ("◐", "yellow"), JobState.PAUSED: ("‖", "cyan"),
    JobState.FINISHED: ("○", "green"), JobState.LANDED: ("●", "green"), JobState.FAILED: ("✗", "red"),
    JobState.STOPPED: ("■", "red"), JobState.HELD: ("!", "magenta"), JobState.RETRIED: ("↻", "grey62"),
    JobState.LOST: ("?", "red"), JobState.REPORTED: ("◆", "green")}
PID_FILE = "engine.pid"  # written by engine/background.EngineLock, read here and there


def collect_shown(lead: Lead, fold_after: int | None = None, *, slim: bool = False) -> dict[str, Any]:
    """`collect(lead, fold_after, slim=slim)`, each worker's handle in its row, and `engine`: whether one runs (its
    pid) and how many pieces wait for one. `slim`: done rows as their kept text (`board --json`, engine/kept.py)."""
    from git_balanced import handles  # here: the engine reads this module for its pid file alone
    from git_balanced.engine.board import collect

    with lead.repo.listing_once():  # the refs listed once for the board and its handles
        data = handles.add_to_board(lead.repo, collect(lead, fold_after, slim=slim))
    data["engine"] = engine_state(lead, data)
    return data


def engine_state(lead: Lead, data: dict[str, Any]) -> dict[str, Any]:
    """Whether an engine runs for this repository (read from its lock's pid file, never by taking the lock,
    which could turn away an engine starting then), and how many pieces have work only an engine does."""
    pid, tick = engine_record(lead)
    running = pid is not None and pid_alive(pid, tick)
    waiting = sum(1 for r in data["jobs"] if r["state"] in LIVE) + \
        sum(1 for n in data["next"] if "piece" in n and n.get("words") == "about to start")
    return {"running": running, "pid": pid if running else None, "waiting": waiting,
            "start": None if running or not waiting else START}


def engine_pid(lead: Lead) -> int | None:
    """The pid in the engine's pid file (engine/background.EngineLock writes it, and takes it away as it ends),
    read without loading the engine's loop: the board starts fast."""
    return engine_record(lead)[0]


def engine_record(lead: Lead) -> tuple[int | None, str]:
    """(pid, start tick) in the engine's pid file: `PID` on its first line and, since 5 December 2026, its start
    tick on the second ("" in a file written before), so that a pid the kernel gave to a later process after the
    engine was killed is not taken for the engine. (None, "") without a file, or with junk in it."""
    try:
        lines = (lead.repo.state_dir / PID_FILE).read_text().split()
        return int(lines[0]), (lines[1] if len(lines) > 1 else "")
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None, ""


def engine_running(lead: Lead) -> int | None:
    """The pid of the engine the pid file names, while that very process runs (its start tick checked)."""
    pid, tick = engine_record(lead)
    return pid if pid is not None and pid_alive(pid, tick) else None


def engine_line(data: dict[str, Any]) -> str:
    """The board's line when pieces wait and no engine runs, with the command that starts one; else ''."""
    e = data.get("engine") or {}
    if e.get("running") or not e.get("waiting"):
        return ""
    n = e["waiting"]
    return (f"No engine runs, so {n} piece{'s' if n != 1 else ''} wait{'' if n != 1 else 's'}: start one with "
            f"`{START}` (or `git balanced engine` to watch it work here).")
