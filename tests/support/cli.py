"""Running `git balanced` from a given folder: in this process (the default), or as a real process.

A real process costs 0.3 to 0.7 s of imports a call, so a test runs the command in-process unless a process
boundary is what it tests: a crash that kills the process, git's own front door, hooks git runs, a terminal.
An in-process call sees what a fresh process would: its own folder, stdin and environment, and none of the
per-process memory (transports, sessions, pushed bases, the state cache) of the call before it.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Ran:
    code: int
    out: str
    err: str


def balanced(cwd: Path, *args: str, input: str | None = None, env: Mapping[str, str | None] | None = None) -> Ran:
    """`git balanced ARGS` in `cwd`, run in this process (the entry point the console script calls), with
    `env` added to its environment (None takes a variable away)."""
    from git_balanced.cli import main

    with _as_a_process(cwd, input, env or {}) as (out, err):
        code = main(list(args))
    return Ran(code, out.getvalue(), err.getvalue())


def balanced_process(cwd: Path, *args: str, input: str | None = None, timeout: float | None = None) -> Ran:
    """`git balanced ARGS` in `cwd` through the real `git` front door (a subprocess)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cp = subprocess.run(["git", "balanced", *args], cwd=cwd, capture_output=True, text=True, input=input,
                        env=env, stdin=None if input is not None else subprocess.DEVNULL, timeout=timeout)
    return Ran(cp.returncode, cp.stdout, cp.stderr)


def forget_process_state() -> None:
    """Drop what the package keeps for the life of a process, as a process that ends would."""
    mods = sys.modules
    if "git_balanced.process" in mods:
        mods["git_balanced.process"].forget()


@contextmanager
def _as_a_process(cwd: Path, input: str | None, more: Mapping[str, str | None]
                  ) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """The folder, streams and environment of one command, given back as they were afterwards."""
    here = os.getcwd()
    env = dict(os.environ)
    streams = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    try:
        for key, value in more.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        # Like a subprocess with stdin from /dev/null (or the text given): not a terminal, read to its end.
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(input or ""), out, err
        os.chdir(cwd)
        yield out, err
    finally:
        os.chdir(here)
        sys.stdin, sys.stdout, sys.stderr = streams
        if dict(os.environ) != env:
            os.environ.clear()
            os.environ.update(env)
        forget_process_state()
