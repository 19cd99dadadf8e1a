"""What the benchmarks share to set themselves up: a private environment (HOME, XDG folders, git identity) so no
figure depends on whose machine it is, and the whole computer's busy CPU time."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def private_env(root: Path, who: str = "bench", drop: tuple[str, ...] = ("GIT_",)) -> dict[str, str]:
    """This process's environment without the variables starting with `drop`, with HOME (`root/home`) and the
    XDG state, config, cache and data folders under `root` (made here), no system git config, `who` as git's
    author and committer, no editor or prompt, and this Python's folder first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(root / "home"), XDG_STATE_HOME=str(root / "state"), XDG_CONFIG_HOME=str(root / "config"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_DATA_HOME=str(root / "data"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL=f"{who}@localhost", GIT_COMMITTER_NAME=who,
               GIT_COMMITTER_EMAIL=f"{who}@localhost", GIT_EDITOR="false", GIT_TERMINAL_PROMPT="0",
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    for d in ("home", "state", "config", "cache", "data"):
        (root / d).mkdir(parents=True, exist_ok=True)
    return env


def cpu_busy() -> float:
    """CPU-seconds this computer spent busy since it started, on every core and for every process (a lead, its
    ssh, and the machines' sshd and workers alike when they all run here)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]  # user nice system idle iowait irq softirq
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
