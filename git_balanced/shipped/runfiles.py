"""What every part of the runner stands on: a run folder and its files, pid files (pids.py checks them), and git
in a folder a worker wrote. Stdlib only, Python 3.9+: part of the runner's source (runner.py)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Any

if "safe_argv" not in globals():  # sent to another machine, untrusted.py's source comes first and defines it
    from git_balanced.untrusted import safe_argv, safe_env, safe_listing
if "JOB_ID" not in globals():  # likewise messages.py
    from git_balanced.shipped.messages import JOB_ID, M, MessageError, Reason
if "alive" not in globals():  # likewise pids.py; the other parts import its checks from here
    from git_balanced.shipped.pids import alive, start_tick, stat_fields  # noqa: F401

RUNS_DIR = "~/.balanced/runs"
GRACE = 10.0  # seconds between SIGTERM and SIGKILL
# Of the GIT_* variables, only these describe the user rather than point git at some other repository.
KEEP_GIT = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
            "GIT_TEMPLATE_DIR", "GIT_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT"}


class RequestError(Exception):
    """A request the runner cannot act on; the message names the key."""


class RunError(Exception):
    """A step of the run that failed (worktree, files, agent start); result.json's `error`. `reason` is its
    code (messages.Reason): what the engine makes of it."""

    def __init__(self, message: str, reason: str = Reason.CRASHED) -> None:
        super().__init__(message)
        self.reason = reason


def _parsed(kind: type[M], req: Any) -> M:
    """The request as a `kind` (messages.py), or a RequestError naming the field that is wrong."""
    try:
        return kind.from_json(req)
    except MessageError as exc:
        raise RequestError(str(exc)) from None


def _path(text: str) -> str:
    return os.path.abspath(os.path.expanduser(text))


def _run_dir(runs_dir: str | None, job: str) -> str:
    """The run folder of `job` under `runs_dir` (RUNS_DIR when None)."""
    if not JOB_ID.match(job):
        raise RequestError(f"the job id {job!r} is not a plain name ([A-Za-z0-9._-], no leading dot)")
    return os.path.join(_path(runs_dir or RUNS_DIR), job)


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read(path: str, binary: bool = False, start: int = 0, size: int = -1) -> Any:
    """A file's text (or bytes) from `start` (from the end when negative); None when it is missing."""
    try:
        with open(path, "rb") as f:
            f.seek(start if start >= 0 else max(0, os.fstat(f.fileno()).st_size + start))
            data = f.read(size)
    except OSError:
        return None
    return data if binary else data.decode("utf-8", "replace")


def _read_pid(path: str) -> tuple[int | None, str]:
    """A pid file's pid and start tick: the tick tells a reused pid from the process that was written."""
    words = (_read(path) or "").split() + ["", ""]
    return (int(words[0]), words[1]) if words[0].isdigit() else (None, "")


def _write_pid(path: str, pid: int) -> None:
    _write_atomic(path, f"{pid}\n{start_tick(pid)}\n")


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEEP_GIT}


def _git(args: list[str], cwd: str, worker: dict | None = None) -> tuple[int, str]:
    """git in the copy or a worktree, which workers write: nothing found there runs (untrusted.py). With
    `worker` (marks for its environment), git as the worker would run it, for a read of where its own commits
    find their hooks."""
    env = {**_base_env(), **(worker or {})}
    argv = ["git", *args]
    if worker is None:
        env = safe_env(env)
        argv = safe_argv(args, cwd, lambda a, c: safe_listing(a, c, env))
    try:
        cp = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, f"git: {exc}"
    return cp.returncode, cp.stdout.decode("utf-8", "replace").strip()


def _note(text: str) -> None:
    print(f"[balanced runner] {text}", file=sys.stderr, flush=True)  # the detached runner's stderr is the log
