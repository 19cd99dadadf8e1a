"""A worker's pen: what a fenced worker (its setup and its agent) may write. On Linux the command runs in a
mount namespace of its own in which the user's home, every folder on PATH and the XDG folders are bound
read-only, and then only what is the worker's own is bound back writable: its worktree, its copy of the
repository, its run folder (its temporary folder and caches are in there) and its agent's own state
(`~/.claude`, `~/.codex`, `~/.pi`). The mounts are made in an outer user namespace and the command runs in an
inner one with the caller's ids, which locks them. Where namespaces are not allowed, the worker runs as it
is, and the runner's result says so. Stdlib only and free of package imports: the runner sends it along.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable

# Runs as root of the outer namespace: folders read-only, then folders writable, then the inner namespace with
# the caller's own ids. `--rbind`: a plain bind of a folder with a mount under it is refused in a user
# namespace. Exit 97 names the mount that failed. The working folder is entered again by its name: the one the
# command was started in is the folder as it was before the mounts, writable, and so would be its `..`.
PEN_SCRIPT = """u=$1; g=$2; shift 2
while [ "$1" != "--" ]; do
  mount --rbind "$1" "$1" && mount -o remount,bind,ro "$1" || { echo "cannot make $1 read-only" >&2; exit 97; }
  shift
done
shift
while [ "$1" != "--" ]; do
  mount --rbind "$1" "$1" && mount -o remount,bind,rw "$1" || { echo "cannot make $1 writable" >&2; exit 97; }
  shift
done
shift
cd "$(pwd -P)" || exit 97
exec unshare --user --map-user="$u" --map-group="$g" --mount -- "$@"
"""
# Each agent's own state, which its CLI writes as it runs (sessions, settings it updates, sign-in refreshes):
# for each place, the variable that moves it, else where it is by default. With CLAUDE_CONFIG_DIR set, Claude
# Code keeps its .claude.json in that folder too.
AGENT_STATE = {"claude": (("$CLAUDE_CONFIG_DIR", "~/.claude"), ("$CLAUDE_CONFIG_DIR", "~/.claude.json")),
               "codex": (("$CODEX_HOME", "~/.codex"),),
               "pi": (("$PI_CODING_AGENT_DIR", "~/.pi"),)}


def wrap(argv: list[str], readonly: list[str], writable: list[str]) -> list[str]:
    """`argv` with `readonly` read-only to it and, inside those, `writable` writable again."""
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "sh", "-c", PEN_SCRIPT, "pen", str(os.getuid()), str(os.getgid()), *readonly, "--", *writable, "--",
            *argv]


def available() -> bool:
    """Whether this machine lets the runner pen a worker in, probed on a folder of its own. Asked once per
    worker, by its runner as it starts the worker; nothing is kept."""
    if os.environ.get("GIT_BALANCED_NO_FENCE") or not (shutil.which("unshare") and shutil.which("mount")):
        return False
    try:
        folder = tempfile.mkdtemp(prefix="balanced-pen-probe-")
    except OSError:
        return False
    try:
        os.mkdir(os.path.join(folder, "own"))
        # Passes only when the folder is refused and the one bound back is not.
        test = 'touch "$0/own/x" && ! touch "$0/x" 2>/dev/null'
        cp = subprocess.run(wrap(["sh", "-c", test, folder], [folder], [os.path.join(folder, "own")]),
                            capture_output=True, timeout=10)
        return cp.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _expand(text: str, env: dict[str, str]) -> str:
    if text.startswith("$"):
        return env.get(text[1:], "")
    return os.path.join(env.get("HOME", "~"), text[2:]) if text.startswith("~/") else text


def agent_state(agent: str, env: dict[str, str]) -> list[str]:
    """The agent's own state on this machine, made now when missing (a folder, or an empty JSON file), so
    that it can be bound back writable."""
    out: list[str] = []
    for moved, default in AGENT_STATE.get(agent, ()):
        path = _expand(moved, env) or _expand(default, env)
        if path in out:
            continue
        try:
            if path.endswith(".json"):
                if not os.path.exists(path):
                    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                        f.write("{}\n")
            else:
                os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        out.append(path)
    return out


def folders(env: dict[str, str], own: list[str]) -> tuple[list[str], list[str]]:
    """(read-only, writable) for a worker: the user's home, the folders on PATH and the XDG folders
    read-only; `own` (its worktree, copy, run folder, agent state) writable. Only folders that exist, each
    once, and never `/` (a home of `/` would make the machine read-only, not the home)."""
    home = env.get("HOME", "")
    shut = [home, *env.get("PATH", "").split(os.pathsep),
            *(env.get(k, "") for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"))]
    readonly = _existing(p for p in shut if os.path.isabs(p))
    readonly = [p for p in readonly if p != "/"]
    writable = _existing(own)
    return readonly, writable


def _existing(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        real = os.path.realpath(p)
        if os.path.exists(real) and real not in out:
            out.append(real)
    return out
