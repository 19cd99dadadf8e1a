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


# The planter: finds the victim's run folder, and while the victim runs, and for a while after it finished,
# points balanced/victim at a commit of its own: in its own copy (where its git commands go), and in the
# machine's shared copy by path (the alternates of its copy name it). It writes what it saw into src/seen.
PLANT_WHILE_IT_RUNS = r'''
mkdir -p src/seen
end=$(( $(date +%s) + 60 )); req=""
while [ -z "$req" ] && [ "$(date +%s)" -lt "$end" ]; do
  req=$(grep -l '"branch": "balanced/victim"' "$HOME"/.balanced/runs/*/request.json 2>/dev/null | head -1); sleep 0.05
done
[ -n "$req" ] && echo found > src/seen/victim.txt
done_file="$(dirname "$req")/result.json"
[ -e "$done_file" ] || echo running > src/seen/while.txt
echo planted > src/planted.txt && git add src/planted.txt
c=$(git commit-tree "$(git write-tree)" -p HEAD -m planted) && git reset -q && rm src/planted.txt
shared=""
alt="$(git rev-parse --git-common-dir)/objects/info/alternates"
[ -f "$alt" ] && shared=$(dirname "$(head -1 "$alt")")
echo none > src/seen/shared.txt
after=0; seen=""
while [ "$(date +%s)" -lt "$end" ] && [ "$after" -lt 40 ]; do
  git update-ref refs/heads/balanced/victim "$c"
  if [ -n "$shared" ]; then
    # GIT_CONFIG_COUNT=0: past the worker's courtesy refusal of pushes (workenv.no_push); only the fence stops it.
    if GIT_CONFIG_COUNT=0 git push -q -f "$shared" "$c:refs/heads/balanced/victim" 2>/dev/null; then
      echo planted > src/seen/shared.txt
    else grep -q planted src/seen/shared.txt || echo refused > src/seen/shared.txt; fi
  fi
  [ -e "$done_file" ] && seen=1  # the victim finished: 4 seconds more, its folder cleaned up or not
  [ -n "$seen" ] && after=$((after + 1))
  sleep 0.1
done
echo ok > src/p.txt
'''


@pytest.mark.parametrize("fence", ["fenced", "unfenced"])
def test_a_worker_cannot_move_a_running_pieces_branch_on_its_machine(machines: Machines, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     fence: str) -> None:
    """Two pieces at once on one machine, each in its branch's own copy: what the planter points
    balanced/victim at, while the victim runs and after it finished, never comes back as the victim's."""
    if fence == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "proj", {"src/base.txt": "ok\n"})
    wire_lead(repo, machines, SETTINGS, tick=["alpha"])
    pieces = [{"id": "planter", "task": "Plant.", "agent": "shell", "machine": "alpha", "run": PLANT_WHILE_IT_RUNS},
              {"id": "victim", "task": "Work.", "agent": "shell", "machine": "alpha",
               "run": "sleep 2; echo fine > src/victim.txt"}]
    assert balanced(repo, "plan", "-", "--start", input=json.dumps({"task": "t", "pieces": pieces})).code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran
    assert git(repo, "show", "main:src/seen/victim.txt") == "found"
    assert git(repo, "show", "main:src/seen/while.txt") == "running", "the planter ran while the victim did"
    assert git(repo, "ls-tree", "-r", "--name-only", "main", "src/").split() == [
        "src/base.txt", "src/p.txt", "src/seen/shared.txt", "src/seen/victim.txt", "src/seen/while.txt",
        "src/victim.txt"]
    assert "planted" not in git(repo, "log", "--format=%s", "main")
    victim = git(repo, "log", "--format=%H", "-1", "main", "--", "src/victim.txt")
    assert git(repo, "show", "--name-only", "--format=", victim).split() == ["src/victim.txt"], \
        "the victim's landed commit holds its own work only"
    # Fenced, the machine's copy is read-only to a worker; unfenced it writes it, and the lead never reads it.
    assert git(repo, "show", "main:src/seen/shared.txt") == ("refused" if fence == "fenced" else "planted")
    copies = alpha.home / ".balanced" / "copies"
    assert not [p for p in copies.glob("*/*")], "each branch's copy there went with its worktree"
