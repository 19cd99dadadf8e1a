"""Acting in a project: `git balanced ARGS` run in its folder, on this machine or on its SSH machine through the
one door to machines (chief/remote.py, over machines/reach/transport.py). The chief does everything it does in a
project this way, so a project over SSH is no different from one here.
"""

from __future__ import annotations

import json
from typing import Any

from git_balanced import proc
from git_balanced.chief.projects import Project
from git_balanced.errors import BalancedError

TIMEOUT = 120.0


def argv_of(args: list[str]) -> list[str]:
    """The command line that runs `git balanced ARGS` here: this very install, as `lead start` runs its driver
    (`-P`: never a `git_balanced/` in the project's checkout it runs in)."""
    return proc.ours("git_balanced.cli", *args)


def said(project: Project, args: list[str], *, timeout: float = TIMEOUT) -> str:
    """What `git balanced ARGS` printed in the project; its refusal, as it said it, raised. A project on an SSH
    machine is run there through chief/remote.py (the one door to machines)."""
    if project.machine:
        from git_balanced.chief.remote import run_there

        return run_there(project, args, timeout=timeout)
    res = proc.run(argv_of(args), cwd=project.path, timeout=timeout)
    if res.code != 0:
        words = (res.err or res.out).strip()
        message, _, hint = words.removeprefix("error: ").partition("\nhint: ")
        raise BalancedError(f"In {project.name}: {message or f'git balanced {args[0]} exited {res.code}'}",
                            hint=hint.strip() or f"run `git balanced {' '.join(args)}` in {project.path} to see why.")
    return res.out


def data(project: Project, args: list[str], *, timeout: float = TIMEOUT) -> Any:
    """The JSON `git balanced ARGS --json` printed in the project."""
    out = said(project, args, timeout=timeout)
    try:
        return json.loads(out) if out.strip() else None
    except ValueError:
        raise BalancedError(f"In {project.name}: `git balanced {' '.join(args)}` printed no JSON.",
                            hint="the git balanced installed there may be older than this one: update it.") from None
