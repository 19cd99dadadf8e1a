"""A worker's pen: what a fenced worker (its setup and its agent) may write. On Linux the command runs in a
mount namespace of its own in which the user's home, every folder on PATH and the XDG folders are bound
read-only, and then only what is the worker's own is bound back writable: its worktree, its copy of the
repository, its run folder (its temporary folder and caches are in there) and its agent's own state
(`~/.claude`, `~/.codex`, `~/.pi`). The mounts are made in an outer user namespace and the command runs in an
inner one with the caller's ids, which locks them. Where namespaces are not allowed, the worker runs as it
is, and the runner's result says so. Stdlib only and free of package imports: the runner sends it along.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

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


# The two ways of making a pen: `enter` in the process that runs the command, or PEN_SCRIPT's processes.
LIBC, SHELL = "libc", "shell"
# Linux's numbers (sched.h, mount.h) and, for a remount, which of the mount's flags (statvfs's) it must keep.
NEWNS, NEWUSER = 0x20000, 0x10000000
RDONLY, REMOUNT, BIND, REC, PRIVATE, STRICTATIME = 1, 32, 4096, 16384, 1 << 18, 1 << 24
KEPT = ((2, 2), (4, 4), (8, 8), (1024, 1024), (2048, 2048), (4096, 1 << 21))  # nosuid nodev noexec noatime ...


class PenError(Exception):
    """A step of `enter` the kernel refused, in words."""


def _libc() -> Any:
    """The C library's `unshare` and `mount`, looked up now: in the parent, so that a forked child calls them
    without taking the dynamic loader's lock, which another thread may have held at the fork."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
    libc.unshare.argtypes = (ctypes.c_int,)
    return libc


def enter(readonly: list[str], writable: list[str], libc: Any = None) -> None:
    """PEN_SCRIPT's steps in this process, through libc (`_libc`, looked up now when not given): an outer user
    namespace where it is root, `readonly` bound read-only and `writable` bound back writable, then an inner
    namespace with the caller's ids, which locks those mounts. The process that calls it is the one to be penned:
    a child about to run the command (`preexec`), never a process that goes on. A remount keeps what of its
    mount's flags a user namespace may not drop."""
    import ctypes

    libc = libc or _libc()

    def check(rc: int, words: str) -> None:
        if rc != 0:
            raise PenError(f"{words}: {os.strerror(ctypes.get_errno())}")

    def ids(inside: tuple[int, int], outside: tuple[int, int]) -> None:
        check(libc.unshare(NEWUSER | NEWNS), "cannot enter a user namespace")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{inside[0]} {outside[0]} 1"),
                           ("gid_map", f"{inside[1]} {outside[1]} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)

    uid, gid = os.getuid(), os.getgid()
    ids((0, 0), (uid, gid))
    check(libc.mount(b"none", b"/", None, REC | PRIVATE, None), "cannot make the mounts private")
    for folders, mode in ((readonly, "read-only"), (writable, "writable")):
        for folder in folders:
            path = os.fsencode(folder)
            check(libc.mount(path, path, None, BIND | REC, None), f"cannot make {folder} {mode}")
            have = os.statvfs(folder).f_flag
            flags = REMOUNT | BIND | (RDONLY if mode == "read-only" else 0) | sum(m for f, m in KEPT if have & f)
            flags |= 0 if have & (1024 | 4096) else STRICTATIME
            check(libc.mount(None, path, None, flags, None), f"cannot make {folder} {mode}")
    os.chdir(os.getcwd())  # entered again by its name, through the new mounts
    ids((uid, gid), (0, 0))


def preexec(readonly: list[str], writable: list[str]) -> Callable[[], None]:
    """What a child runs before its command (subprocess's `preexec_fn`) to be penned with `enter`: on a refusal it
    says why on its stderr and exits 97, as PEN_SCRIPT does, without running the command. Only for a process
    without threads (the runner), as `preexec_fn` asks."""

    libc = _libc()

    def pen_me() -> None:
        try:
            enter(readonly, writable, libc)
        except (OSError, PenError) as exc:
            os.write(2, f"pen: {exc}\n".encode("utf-8", "replace"))
            os._exit(97)

    return pen_me


def wrap(argv: list[str], readonly: list[str], writable: list[str]) -> list[str]:
    """`argv` with `readonly` read-only to it and, inside those, `writable` writable again (PEN_SCRIPT)."""
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "sh", "-c", PEN_SCRIPT, "pen", str(os.getuid()), str(os.getgid()), *readonly, "--", *writable, "--",
            *argv]


def available() -> bool:
    """Whether this machine lets the runner pen a worker in (`probe`)."""
    return probe() is not None


def probe() -> str | None:
    """The way this machine lets the runner pen a worker in, probed on a folder of its own: LIBC (`enter`, in a
    child forked for it), else SHELL (PEN_SCRIPT); None where neither works. A runner session asks it once and
    hands the way to each runner it forks (launch.start); a runner started alone asks it for its worker."""
    if os.environ.get("GIT_BALANCED_NO_FENCE"):
        return None
    for way in (LIBC, SHELL):
        if way == SHELL and not (shutil.which("unshare") and shutil.which("mount")):
            continue
        try:
            folder = tempfile.mkdtemp(prefix="balanced-pen-probe-")
        except OSError:
            return None
        try:
            os.mkdir(os.path.join(folder, "own"))
            if (_probe_libc if way == LIBC else _probe_shell)(folder):
                return way
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return None


def _probe_shell(folder: str) -> bool:
    """Passes only when the folder is refused and the one bound back is not."""
    test = 'touch "$0/own/x" && ! touch "$0/x" 2>/dev/null'
    try:
        cp = subprocess.run(wrap(["sh", "-c", test, folder], [folder], [os.path.join(folder, "own")]),
                            capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return cp.returncode == 0


def _probe_libc(folder: str) -> bool:
    """The same test in a forked child that `enter`s the pen and tries both writes itself: no process started."""
    try:
        libc = _libc()
    except (ImportError, OSError, AttributeError):  # no ctypes, or a C library without these: the shell's way
        return False
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            enter([folder], [os.path.join(folder, "own")], libc)
            os.close(os.open(os.path.join(folder, "own", "x"), os.O_WRONLY | os.O_CREAT, 0o600))
            try:
                os.close(os.open(os.path.join(folder, "x"), os.O_WRONLY | os.O_CREAT, 0o600))
            except OSError as exc:
                code = 0 if exc.errno == errno.EROFS else 1  # refused as read-only, as it must be
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1] == 0


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
