"""Which process a lead's session is, so that what its hooks record of it (agents/modes.py: its mode and model)
lives as long as it does and no longer.

A hook is started by the lead's agent CLI, through a shell or `git` or neither (Claude Code runs `sh -c`, Codex and
Pi's extension the command itself): the session is the nearest process above the hook that is none of those (read
from /proc, or from `ps` where there is none). A headless lead's session is its driver (kit/headless.py), which
outlives each turn's agent. A process is kept as its pid and start tick (shipped/pids.py), so a pid the kernel
later gives another process is not taken for the session."""

from __future__ import annotations

import os

from git_balanced.shipped.pids import _alive, _stat, _tick

TYPE_CHECKING = False  # a worker's hook reads whether its lead's session lives on every tool call: no typing
if TYPE_CHECKING:
    from typing import Any

LAUNCHERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env", "git", "git-balanced"})
MOST_STEPS = 8  # a hook is never that deep under its agent


def owner_of(pid: int) -> dict[str, Any]:
    """The process `pid` as a record keeps its session: its pid and start tick."""
    return {"pid": pid, "tick": _tick(pid)}


def of_hook() -> dict[str, Any]:
    """The session this hook's process runs under: the nearest process above it that is not a launcher."""
    pid = os.getppid()
    for _ in range(MOST_STEPS):
        name, parent = _name_and_parent(pid)
        if name not in LAUNCHERS or parent <= 1:
            break
        pid = parent
    return owner_of(pid)


def _name_and_parent(pid: int) -> tuple[str, int]:
    """A process's name and its parent's pid: from /proc, else (macOS, the BSDs) as `ps` tells them."""
    fields = _stat(pid)
    if fields:
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
                return f.read().strip(), int(fields[1])
        except OSError:
            return "", 0
    return from_ps(pid)


def from_ps(pid: int) -> tuple[str, int]:
    """A process's name and its parent's pid as `ps` tells them (where there is no /proc)."""
    from git_balanced import proc  # only where there is no /proc

    said = proc.run(["ps", "-o", "ppid=", "-o", "comm=", "-p", str(pid)], timeout=10).out.split(None, 1)
    if len(said) != 2 or not said[0].isdigit():
        return "", 0
    return os.path.basename(said[1].strip()), int(said[0])


def lives(rec: dict[str, Any]) -> bool:
    """Whether the session a record was written for still runs. A record that names no process (written before
    sessions were kept) cannot be told from a stale one, so it counts as gone: the lead's next hook writes it
    again."""
    pid, tick = rec.get("pid"), rec.get("tick")
    return isinstance(pid, int) and _alive(pid, tick if isinstance(tick, str) else "")
