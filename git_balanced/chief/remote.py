"""A project on an SSH machine, read by running `git balanced ... --json` in its folder there, through the one
door to machines (machines/reach/transport.py). git balanced is found in ~/.local/bin, where pipx, uv and pip
--user put it (first, as a login shell's PATH has it on most systems), else on the machine's PATH."""

from __future__ import annotations

import json
import shlex
from typing import Any

from git_balanced import proc, process
from git_balanced.chief.projects import Project
from git_balanced.errors import BalancedError
from git_balanced.machines.inventory import records
from git_balanced.machines.reach.routes import Reach

# Fixed text: the folder and the arguments come after it as $1, $2..., quoted by the transport.
_PATH = 'PATH="$HOME/.local/bin:$PATH"'
_THERE = f'cd -- "$1" || exit 3; shift; {_PATH}; exec git balanced "$@"'
TIMEOUT = 60.0


def run_there(project: Project, args: list[str], *, timeout: float = TIMEOUT) -> str:
    """What `git balanced ARGS` prints in the project's folder on its machine; one clear refusal when it fails."""
    assert project.machine, "a project on this machine is read here, not over SSH"
    t = process.part(Reach).transport(records.host_alias(project.machine))
    res = t.run(["sh", "-c", _THERE, "sh", project.path, *args], timeout=timeout)
    if res.code == 0:
        return res.out
    raise _refusal(project, args, res, timeout)


def _refusal(project: Project, args: list[str], res: proc.Result, timeout: float) -> BalancedError:
    """Why `git balanced ARGS` failed on the project's machine, in one error: no such folder there; git balanced's
    own refusal there, in its words; no git balanced there; its time ran out; else what it printed."""
    assert project.machine
    shown = "git balanced " + shlex.join(args)
    said = (res.err.strip() or res.out.strip() or f"it exited {res.code}").splitlines()
    if res.code == 3 and "cd" in res.err:
        return BalancedError(f"{project.where}: there is no folder {project.path} on {project.machine}.",
                             hint="give the repository's folder there, from / or from the home folder of "
                                  f"`ssh {project.machine}`.")
    error = next((line[len("error: "):] for line in said if line.lower().startswith("error: ")), None)
    if error is not None:  # git balanced there refused it, and said why: its words, and its hint
        hint = next((line[len("hint: "):] for line in said if line.startswith("hint: ")), None)
        if error.startswith("No such "):  # its command line refused by an older git balanced there
            hint = hint or f"the git balanced on {project.machine} is older than this one: update it there."
        return BalancedError(f"{project.where}: {error}", hint=f"(on {project.machine}) {hint}" if hint else None)
    if "is not a git command" in res.err or (res.code == 127 and "not found" in res.err):  # no git balanced, no git
        return BalancedError(f"{project.where}: git balanced is not installed on {project.machine}.",
                             hint=f"install it there (`pipx install git-balanced` or from a clone), in ~/.local/bin "
                                  f"or on the PATH of `ssh {project.machine}`.")
    again = f"ssh {project.machine} " + shlex.quote(f"cd {shlex.quote(project.path)} && {_PATH} {shown}")
    if res.code == proc.TIMED_OUT and "timed out after" in said[-1]:
        return BalancedError(f"{project.where}: `{shown}` did not end within {timeout:g} s on {project.machine}.",
                             hint=f"run it there to see where it waits: `{again}`.")
    return BalancedError(f"{project.where}: `{shown}` failed on {project.machine}: " + " / ".join(said[:3]),
                         hint=f"run it there to see why: `{again}`.")


def read_json(project: Project, args: list[str]) -> Any:
    """`git balanced ARGS --json` in the project's folder on its machine, parsed."""
    out = run_there(project, [*args, "--json"])
    try:
        return json.loads(out)
    except ValueError:
        raise BalancedError(f"{project.where}: `git balanced {shlex.join(args)} --json` on {project.machine} did not "
                            "print JSON.", hint=f"the version there may be older: update git balanced on "
                                                f"{project.machine}.") from None
