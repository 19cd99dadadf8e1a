"""The one process helper: every subprocess of the package goes through `run`."""

from __future__ import annotations

import os
import time

from git_balanced import process

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import Any, NamedTuple
else:
    from git_balanced.typed import NamedTuple

MARK = "GIT_BALANCED_CHECK"  # in a check's environment: `<scratch path>#<id>`, inherited by all it starts
GRACE = 3.0  # seconds a process tree has between SIGTERM and SIGKILL
SLICE = 0.2  # how often a marked run looks whether the process is stopping
TIMED_OUT = 124  # the code of a command ended at its timeout, as `timeout` says it; "timed out after" ends its words


class _Stop:
    """Set when the process is asked to stop (the engine's SIGTERM): every marked run ends its tree and raises
    Stopped, so no wait on a check outlives the stop."""

    def __init__(self) -> None:
        import threading  # here: the board and the inbox wait on no process

        # A plain flag, not a threading.Event: a signal handler sets it, and an Event's set takes a lock that the
        # same thread may hold already (a second Ctrl-C, as git passes its own on to `git balanced`, landing in
        # the first one's set): the engine then waited on itself for ever. Nothing waits on it; runs look at it.
        self.asked = False
        self.marks: set[str] = set()  # mark prefixes whose runs alone are asked to stop (stop_marked)
        self.lock = threading.Lock()


def stop_marked(prefixes: Sequence[str]) -> None:
    """Ask the marked runs whose mark starts with one of `prefixes` (and those that start meanwhile) to end their
    tree and raise Stopped, as ask_to_stop asks all of them; until go_on_marked takes it back."""
    part = process.part(_Stop)
    with part.lock:
        part.marks.update(prefixes)


def go_on_marked(prefixes: Sequence[str]) -> None:
    """Take back stop_marked for `prefixes`: runs marked with them run again."""
    part = process.part(_Stop)
    with part.lock:
        part.marks.difference_update(prefixes)


def _stopping(mark: str) -> bool:
    """Whether the run marked `mark` is to stop: the whole process is, or its mark was (stop_marked)."""
    part = process.part(_Stop)
    if part.asked:
        return True
    with part.lock:
        return any(mark.startswith(p) for p in part.marks)


def ask_to_stop() -> None:
    """Ask every marked run of this process to end its tree and raise Stopped (a signal handler calls it: it takes
    no lock)."""
    process.part(_Stop).asked = True


def stop_asked() -> bool:
    """Whether this process was asked to stop (ask_to_stop) and not let go on since (go_on)."""
    return process.part(_Stop).asked


def go_on() -> None:
    """Take back ask_to_stop: marked runs run again (an engine's loop starts, or has ended)."""
    process.part(_Stop).asked = False


class Stopped(BaseException):
    """A marked run was ended because this process is stopping; a BaseException, so no handler of
    failures mistakes it for one (a check that was stopped neither passed nor failed)."""


class Result(NamedTuple):
    """What a command ended with: its exit code and its two streams (a NamedTuple: no `dataclasses` at start)."""

    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def no_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment without the GIT_* variables that git leaks into hooks (they would point
    a child git at the wrong repository), keeping the ones that only carry identity or config."""
    keep = {
        "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TEMPLATE_DIR", "GIT_EDITOR",
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT",
    }
    src = os.environ if env is None else env
    return {k: v for k, v in src.items() if not k.startswith("GIT_") or k in keep}


def run(
    cmd: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float | None = None,
    text: bool = True,
) -> Result:
    """Run a command to completion and return (code, stdout, stderr); never raises on exit status."""
    data: str | bytes | None = input
    if data is not None and text and isinstance(data, bytes):
        data = data.decode()
    try:
        code, out, err = _communicate(cmd, cwd, env, data, timeout, text, merge=False)
    except FileNotFoundError:
        return Result(127, "", f"{cmd[0]}: command not found")
    if code is None:
        return Result(TIMED_OUT, out, err + f"\ntimed out after {timeout} seconds")
    return Result(code, out, err)


def shell(command: str, *, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None,
          timeout: float | None = None, argv: Sequence[str] | None = None, mark: str | None = None) -> Result:
    """Run a user's command line (setup, check, a shell piece) with `sh -c`, output merged; `argv`, when
    given, is the same command wrapped (see fence.py). With `mark`, the run carries it in its environment
    (MARK), its tree is ended by it too (children that left the group), and a stop ends it (Stopped)."""
    if mark is None:
        code, out, _ = _communicate(argv or ["sh", "-c", command], cwd, env, None, timeout, True, merge=True)
    else:
        code, out = _marked_run(argv or ["sh", "-c", command], cwd, {**(env or os.environ), MARK: mark},
                                timeout, mark)
    if code is None:
        return Result(TIMED_OUT, out + f"\ntimed out after {timeout} seconds", "")
    return Result(code, out, "")


def _marked_run(cmd: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str], timeout: float | None,
                mark: str) -> tuple[int | None, str]:
    """Run in a process group of its own, output merged: (code, out), or (None, what came) past `timeout`,
    when its tree is ended; Stopped once stop_asked() or its mark is stopped (stop_marked), its tree ended first."""
    import subprocess  # here: the board and the inbox start no process

    if _stopping(mark):
        raise Stopped
    deadline = None if timeout is None else time.monotonic() + timeout
    with subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", process_group=0) as p:
        got: list[str] = []
        try:
            while True:
                left = SLICE if deadline is None else min(SLICE, deadline - time.monotonic())
                try:
                    out, _ = p.communicate(timeout=max(0.0, left))
                    # The shell ended; what it left behind with the pipe closed would run on unbounded.
                    end_tree(p.pid, mark)
                    return p.returncode, out
                except subprocess.TimeoutExpired as exc:
                    got[:] = [_decoded(exc.stdout)]
                if _stopping(mark):
                    raise Stopped
                if deadline is not None and time.monotonic() >= deadline:
                    end_tree(p.pid, mark)
                    p.wait()
                    return None, got[0] if got else ""
        except BaseException:  # Stopped, or Ctrl-C while waiting: nothing of it runs on
            end_tree(p.pid, mark)
            p.wait()
            raise


def marked(prefix: str) -> list[int]:
    """The processes of this user whose environment carries MARK starting with `prefix` (read from /proc; none
    where there is no /proc)."""
    want = f"\0{MARK}={prefix}".encode()  # a variable starting so, found by one search of the whole block
    found = []
    try:
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:  # gone meanwhile, or another user's
            continue
        if want in b"\0" + env:
            found.append(pid)
    return found


def end_tree(group: int | None, mark: str, grace: float = GRACE) -> int:
    """End process group `group` and every process marked with `mark` (or starting with it): SIGTERM, then
    SIGKILL to what is left after `grace` seconds. How many processes there were."""
    import signal  # here: the board and the inbox end no process

    def alive() -> set[int]:
        pids = set(marked(mark))
        if group is not None:
            pids |= _in_group(group)
        return pids

    first = alive()
    if not first and (group is None or os.path.isdir("/proc")):  # where /proc is not, the group is signalled
        return 0
    _signal_all(group, first, signal.SIGTERM)
    end = time.monotonic() + grace
    left = first
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = alive()
    if left:
        _signal_all(group, left, signal.SIGKILL)
        end = time.monotonic() + 1.0  # SIGKILL is not refused, only a moment in arriving
        while alive() and time.monotonic() < end:
            time.sleep(0.02)
    return len(first)


def _in_group(group: int) -> set[int]:
    """The live processes of a process group (zombies do not count: nothing of them runs)."""
    found = set()
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return set()
    for n in names:
        try:
            with open(f"/proc/{n}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.add(int(n))
    return found


def _signal_all(group: int | None, pids: set[int], sig: int) -> None:
    import contextlib  # here, as in _kill: the board and the inbox end no process

    if group is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _communicate(cmd: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None,
                 data: str | bytes | None, timeout: float | None, text: bool,
                 *, merge: bool) -> tuple[int | None, Any, Any]:
    """Run to the end: (code, out, err), or (None, what came so far) once `timeout` passed.

    A command given a timeout starts in a process group of its own, and the timeout kills the whole
    group: what it started (git's ssh, a check's test server) would otherwise live on, and hold its pipes.
    plumbum's `run(timeout=...)` kills only the direct child, then waits for the pipes to close, so it
    would wait for those as long as they live. Without a timeout the command stays in our group, where
    the terminal's Ctrl-C reaches it."""
    import subprocess  # here: the board and the inbox start no process

    with subprocess.Popen(
        list(cmd), cwd=cwd, env=dict(env) if env is not None else None,
        stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        text=text, errors="replace" if text else None,
        process_group=0 if timeout is not None else None,
    ) as p:
        try:
            out, err = p.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            _kill(p, group=True)
            return None, _decoded(exc.stdout), _decoded(exc.stderr)
        except BaseException:  # Ctrl-C while waiting: as with subprocess.run, it does not run on
            _kill(p, group=timeout is not None)
            raise
    return p.returncode, out, "" if err is None else err  # None when merged into out


def _kill(p: subprocess.Popen[Any], *, group: bool) -> None:
    import contextlib
    import signal  # here: the board and the inbox end no process

    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.kill()
    p.wait()


def _decoded(data: str | bytes | None) -> str:
    """The output a timeout caught: bytes whether or not the run was in text mode."""
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def spawn_detached(argv: Sequence[str], *, cwd: str | os.PathLike[str], log: str | os.PathLike[str],
                   env: Mapping[str, str] | None = None) -> int:
    """Start a process in its own session, stdin /dev/null, output to `log`; returns its pid at once."""
    import subprocess  # here: the board and the inbox start no process

    with open(log, "ab") as out:
        p = subprocess.Popen(list(argv), cwd=cwd, env=dict(env) if env is not None else None,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, close_fds=True)
    return p.pid


# Runs the module named second on the command line, the folder named first put first on its import path: that
# process alone, so nothing it starts (a check, a setup, an agent) inherits a PYTHONPATH it did not have.
_OURS = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); m = sys.argv[2]; del sys.argv[1:3]; "
         "runpy.run_module(m, run_name='__main__', alter_sys=True)")
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding git_balanced/


def ours(module: str, *args: str) -> list[str]:
    """The command line that runs `python -m MODULE ARGS` of this git balanced, whatever folder it runs in: `-P`
    keeps that folder (a lead's checkout or a project's, where a worker could land a `git_balanced/` of its own)
    off the import path, and the folder that holds the package this process runs is put first on it, in that
    process only."""
    import sys

    return [sys.executable, "-P", "-c", _OURS, _PACKAGE_FOLDER, module, *args]


def ours_code(code: str) -> list[str]:
    """The command line that runs the Python `code` with this git balanced's package importable, whatever folder it
    runs in: as `ours`, without runpy (a hook that runs on every tool call starts on it)."""
    import sys

    return [sys.executable, "-P", "-c", f"import sys; sys.path.insert(0, {_PACKAGE_FOLDER!r}); {code}"]


def spawn_ours(module: str, args: Sequence[str], *, cwd: str | os.PathLike[str], log: str | os.PathLike[str],
               env: Mapping[str, str] | None = None) -> int:
    """`spawn_detached` of `python -m MODULE ARGS` of this git balanced (`ours`); its pid."""
    return spawn_detached(ours(module, *args), cwd=cwd, log=log, env=env)


def open_pipes(cmd: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start a process to talk to over its stdin and stdout (a runner session); stderr is dropped, since a
    session that fails is replaced by a one-off command that reports what went wrong."""
    import subprocess  # here: the board and the inbox start no process

    return subprocess.Popen(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            close_fds=True)
