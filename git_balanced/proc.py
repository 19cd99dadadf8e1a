"""The one process helper: every subprocess of the package goes through `run`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


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
        cp = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            input=data,
            capture_output=True,
            stdin=None if data is not None else subprocess.DEVNULL,
            timeout=timeout,
            text=text,
            errors="replace" if text else None,
        )
    except FileNotFoundError:
        return Result(127, "", f"{cmd[0]}: command not found")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        err = exc.stderr or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
        return Result(124, out, err + f"\ntimed out after {timeout} seconds")
    return Result(cp.returncode, cp.stdout, cp.stderr)


def shell(command: str, *, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None,
          timeout: float | None = None) -> Result:
    """Run a user's command line (setup, check, a shell piece) with `sh -c`, output merged."""
    try:
        cp = subprocess.run(
            ["sh", "-c", command], cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return Result(124, out + f"\ntimed out after {timeout} seconds", "")
    return Result(cp.returncode, cp.stdout, "")


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
