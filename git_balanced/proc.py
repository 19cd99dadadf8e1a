"""The one process helper: every subprocess of the package goes through `run`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Result:
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
        return Result(124, out, err + f"\ntimed out after {timeout} seconds")
    return Result(code, out, err)


def shell(command: str, *, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None,
          timeout: float | None = None, argv: Sequence[str] | None = None) -> Result:
    """Run a user's command line (setup, check, a shell piece) with `sh -c`, output merged; `argv`, when
    given, is the same command wrapped (see fence.py)."""
    code, out, _ = _communicate(argv or ["sh", "-c", command], cwd, env, None, timeout, True, merge=True)
    if code is None:
        return Result(124, out + f"\ntimed out after {timeout} seconds", "")
    return Result(code, out, "")


def _communicate(cmd: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None,
                 data: str | bytes | None, timeout: float | None, text: bool,
                 *, merge: bool) -> tuple[int | None, Any, Any]:
    """Run to the end: (code, out, err), or (None, what came so far) once `timeout` passed.

    A command given a timeout starts in a process group of its own, and the timeout kills the whole
    group: what it started (git's ssh, a check's test server) would otherwise live on, and hold its pipes.
    plumbum's `run(timeout=...)` kills only the direct child, then waits for the pipes to close, so it
    would wait for those as long as they live. Without a timeout the command stays in our group, where
    the terminal's Ctrl-C reaches it."""
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
    with open(log, "ab") as out:
        p = subprocess.Popen(list(argv), cwd=cwd, env=dict(env) if env is not None else None,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, close_fds=True)
    return p.pid


def open_pipes(cmd: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start a process to talk to over its stdin and stdout (a runner session); stderr is dropped, since a
    session that fails is replaced by a one-off command that reports what went wrong."""
    return subprocess.Popen(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            close_fds=True)
