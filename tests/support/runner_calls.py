"""The runner as a machine runs it: `python runner.py ACTION` with a JSON request on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_balanced.shipped import runner

RUNNER = str(Path(runner.__file__))


def call(action: str, request: dict) -> dict:
    """Run the runner's ACTION with `request` on stdin and read its answer, the one line it prints."""
    cp = subprocess.run([sys.executable, RUNNER, action], input=json.dumps(request), capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 0, f"runner {action} exited {cp.returncode}: {cp.stdout}\n{cp.stderr}"
    lines = cp.stdout.splitlines()
    assert len(lines) == 1, f"one JSON line is the whole answer, got {cp.stdout!r}"
    return json.loads(lines[0])


def status_of(runs: Path, job: str) -> dict:
    """The runner's status of one job in the run folders under `runs`."""
    return call("status", {"jobs": [job], "runs_dir": str(runs)})["jobs"][job]
