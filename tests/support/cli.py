"""Running `git balanced` in-process or as a real subprocess, from a given folder."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Ran:
    code: int
    out: str
    err: str


def balanced(cwd: Path, *args: str, capsys: pytest.CaptureFixture[str] | None = None,
             input: str | None = None) -> Ran:
    """`git balanced ARGS` in `cwd` through the real `git` front door (a subprocess)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cp = subprocess.run(["git", "balanced", *args], cwd=cwd, capture_output=True, text=True, input=input,
                        env=env, stdin=None if input is not None else subprocess.DEVNULL)
    return Ran(cp.returncode, cp.stdout, cp.stderr)


def balanced_here(cwd: Path, *args: str, capsys: pytest.CaptureFixture[str],
                  monkeypatch: pytest.MonkeyPatch) -> Ran:
    """The same, in this process (faster; no hooks can observe it)."""
    from git_balanced.cli import main

    capsys.readouterr()
    monkeypatch.chdir(cwd)
    code = main(list(args))
    got = capsys.readouterr()
    return Ran(code, got.out, got.err)
