"""What a worker plants in a machine's copy never runs in a command of ours there: the lead's pushes of a base
(`git receive-pack` in the copy runs its pre-receive, update, reference-transaction and post-update hooks),
its fetches of a finished branch, `ready` again, and the runner's own git. Each plant logs the marks of whoever
ran it; a line with neither a job's nor a check's mark was run by git balanced itself."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines, wire_lead

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\nattempts = 1\n'
HOOKS = ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "push-to-checkout",
         "post-checkout", "pre-commit", "post-commit", "post-index-change")


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


def plant(log: str) -> str:
    logger = f'#!/bin/sh\\necho "job=$BALANCED_JOB check=$GIT_BALANCED_CHECK $0" >> {log} || true\\n'
    lines = ['common=$(git rev-parse --path-format=absolute --git-common-dir)', 'mkdir -p "$common/hooks"']
    for h in HOOKS:
        lines.append(f"printf '{logger}' > \"$common/hooks/{h}\"; chmod +x \"$common/hooks/{h}\"")
    lines.append(f"printf '{logger}exit 1\\n' > \"$common/fsmon\"; chmod +x \"$common/fsmon\"")
    lines.append('git config core.fsmonitor "$common/fsmon"')
    lines.append("git status --porcelain >/dev/null")  # the plant is real: the worker's own git runs it
    lines.append("echo planted > planted.txt")
    return "\n".join(lines) + "\n"


def test_a_worker_that_plants_in_a_machines_copy_is_run_by_nothing_of_ours(
        machines: Machines, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    [alpha] = list(machines)
    project = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
    wire_lead(project, machines, SETTINGS)
    # Where the worker can write in its fence there (not its home, which is read-only to it), and any user can.
    shared = Path(tempfile.mkdtemp(prefix="balanced-plants-", dir="/tmp"))
    shared.chmod(0o1777)
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    log = str(shared / "ran.log")
    pieces = [{"id": "planter", "task": "Plant", "agent": "shell", "machine": "alpha", "run": plant(log)},
              {"id": "later", "task": "After it", "agent": "shell", "machine": "alpha", "after": ["planter"],
               "run": "echo later > later.txt"}]
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"task": "Plant on a machine", "pieces": pieces}))
    assert balanced(project, "plan", str(plan), "--start").code == 0
    ran = balanced(project, "engine", "--until-idle")
    assert ran.code == 0, ran
    assert balanced(project, "ready", "alpha", "--yes").code == 0
    assert balanced(project, "doctor").code in (0, 1)
    lines = Path(log).read_text().splitlines() if Path(log).exists() else []
    assert any(line.startswith("job=") and not line.startswith("job= ") for line in lines), \
        f"the worker's own git ran its plant: the test is real\n{lines}"
    ours = [line for line in lines if line.startswith("job= check= ")]
    assert ours == [], "git balanced ran what a worker planted in alpha's copy:\n" + "\n".join(ours)
