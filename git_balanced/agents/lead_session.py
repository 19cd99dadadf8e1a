"""Which process a lead's session is, so that what its hooks record of it (agents/modes.py: its mode and model)
lives as long as it does and no longer.

A hook is started by the lead's agent CLI, through a shell or `git` or neither (Claude Code runs `sh -c`, Codex and
Pi's extension the command itself), perhaps under a wrapper (`timeout`, `nice`): the session is the nearest process
above the hook named as a pinned agent CLI's process is (AGENTS), past those that only pass a command on
(PASSING). A process of another name stops the walk and is taken for the session (an agent CLI of another build
or name: Node.js running an older one); no walk goes past it, where an agent that runs it all (a worker running
the tests, say) could be found. Names are read from /proc, or from `ps` where there is none. A headless lead's
session is its driver (kit/headless.py), which outlives each turn's agent. A process is kept as its pid and start
tick (shipped/pids.py), so a pid the kernel later gives another process is not taken for the session."""

from __future__ import annotations

import os

from git_balanced.shipped.pids import alive, start_tick, stat_fields

TYPE_CHECKING = False  # a worker's hook reads whether its lead's session lives on every tool call: no typing
if TYPE_CHECKING:
    from typing import Any

# The process names of the pinned agent CLIs, as /proc/PID/comm and `ps -o comm=` give them: Claude Code's own
# binary, Codex's (its npm script execs it), and Pi, which names its Node.js process `pi`.
AGENTS = frozenset({"claude", "codex", "pi"})
# The shells, `env` and `git` a hook is run through, and the wrappers that run a command they are given.
PASSING = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env", "git", "git-balanced",
                     "timeout", "nice", "nohup", "setsid", "stdbuf", "ionice", "chrt", "taskset", "xargs", "sudo",
                     "doas", "runuser"})
MOST_STEPS = 8  # a hook is never that deep under its agent


def owner_of(pid: int) -> dict[str, Any]:
    """The process `pid` as a record keeps its session: its pid and start tick."""
    return {"pid": pid, "tick": start_tick(pid)}


def of_hook() -> dict[str, Any]:
    """The session this hook's process runs under (session_above its parent)."""
    return owner_of(session_above(os.getppid()))


def session_above(pid: int) -> int:
    """The lead's session from `pid` up: the nearest process not in PASSING (an agent CLI's process, by AGENTS's
    name or another); the last one read where all pass a command on (MOST_STEPS up, or the one under init)."""
    for _ in range(MOST_STEPS):
        name, parent = _name_and_parent(pid)
        if name in AGENTS or name not in PASSING or parent <= 1:
            return pid
        pid = parent
    return pid


def _name_and_parent(pid: int) -> tuple[str, int]:
    """A process's name and its parent's pid: from /proc, else (macOS, the BSDs) as `ps` tells them."""
    fields = stat_fields(pid)
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
    return isinstance(pid, int) and alive(pid, tick if isinstance(tick, str) else "")
