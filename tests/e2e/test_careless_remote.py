"""A careless worker on an SSH machine plants another piece's branch in the machine's copy: the other piece
starts from what the lead recorded all the same, fenced or not."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines, wire_lead

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

SETTINGS = '[worktree]\ncheck = "! grep -rq BAD src"\n\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


@pytest.mark.parametrize("fence", ["fenced", "unfenced"])
def test_a_piece_on_a_machine_never_starts_from_a_planted_branch(machines: Machines, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch, fence: str) -> None:
    if fence == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    repo = make_repo(tmp_path / "proj", {"src/base.txt": "ok\n"})
    wire_lead(repo, machines, SETTINGS, tick=["alpha"])
    plant = ('echo planted > src/planted.txt && git add src/planted.txt && '
             'c=$(git commit-tree "$(git write-tree)" -p HEAD -m planted) && git reset -q && rm src/planted.txt && '
             'git update-ref refs/heads/balanced/victim "$c" && echo "$c" > src/planted-at.txt; echo ok > src/p.txt')
    pieces = [{"id": "planter", "task": "Plant.", "agent": "shell", "machine": "alpha", "run": plant},
              {"id": "victim", "task": "Work.", "agent": "shell", "machine": "alpha", "after": ["planter"],
               "run": "echo fine > src/victim.txt"}]
    assert balanced(repo, "plan", "-", "--start", input=json.dumps({"task": "t", "pieces": pieces})).code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran
    planted = git(repo, "show", "main:src/planted-at.txt")
    assert len(planted) == 40, "the worker pointed balanced/victim at a commit of its own in the machine's copy"
    assert git(repo, "ls-tree", "--name-only", "main", "src/").split() == [
        "src/base.txt", "src/p.txt", "src/planted-at.txt", "src/victim.txt"], "victim started from the base"
    assert "planted" not in git(repo, "log", "--format=%s", "main")


def test_a_fenced_worker_on_a_machine_writes_none_of_that_users_files(machines: Machines, tmp_path: Path) -> None:
    """The pen goes with the runner: on the machine, the user's home is read-only to the worker but for its
    own things."""
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "proj", {"src/base.txt": "ok\n"})
    wire_lead(repo, machines, SETTINGS, tick=["alpha"])
    (alpha.home / ".bashrc").write_text("# theirs\n")
    os.chown(alpha.home / ".bashrc", alpha.uid, -1)  # the machine's user's own file: only the fence refuses it
    run = ('{ echo x >> ~/.bashrc; } 2> src/refused.txt || echo bashrc > src/kept.txt; '
           'git config --global core.hooksPath "$HOME/hooks" 2>> src/refused.txt || echo gitconfig >> src/kept.txt; '
           'echo mine > src/mine.txt')
    pieces = [{"id": "reacher", "task": "Reach.", "agent": "shell", "machine": "alpha", "run": run}]
    assert balanced(repo, "plan", "-", "--start", input=json.dumps({"task": "t", "pieces": pieces})).code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran
    assert git(repo, "show", "main:src/kept.txt").split() == ["bashrc", "gitconfig"], "both writes were refused"
    assert "Read-only file system" in git(repo, "show", "main:src/refused.txt")
    assert (alpha.home / ".bashrc").read_text() == "# theirs\n"
