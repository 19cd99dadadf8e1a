"""SSH refusing to log in holds a machine: its worker runs on, is never counted lost, nothing new goes there, the
lead hears once what to fix, and the hold clears when the machine answers again. Real sshd, real refusals."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.machines.inventory import held
from git_balanced.machines.reach import probe
from git_balanced.machines.reach.transport import Transport
from tests.support.builders import git, make_repo
from tests.support.cli import balanced, forget_process_state
from tests.support.sshd import Machine, known_in, module_machine, wire_lead

pytestmark = pytest.mark.sshd

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\nlost_after = 1\n'


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, Path]]:
    with module_machine(tmp_path_factory.mktemp("auth"), "alpha") as found:
        yield found


@pytest.fixture
def alpha(box: tuple[Machine, Path], sealed: Path) -> Machine:
    """The module's machine, known to this test's private HOME through its own copy of the SSH config."""
    m, config = box
    known_in(config, sealed)
    (m.home / "go").unlink(missing_ok=True)
    return m


def shut(config: Path) -> None:
    """Drop every SSH connection this process and the engine's hold, so the next one logs in afresh."""
    forget_process_state()
    Transport("alpha", config=config).close()


def other_key(tmp_path: Path) -> Path:
    key = tmp_path / "stranger_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, capture_output=True)
    return key


def test_a_refused_key_holds_the_machine_and_its_worker_runs_on(alpha: Machine, sealed: Path,
                                                                tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    wire_lead(repo, [alpha], SETTINGS)  # type: ignore[arg-type]
    go = alpha.home / "go"
    (tmp_path / "plan.yaml").write_text(json.dumps({"task": "Hold", "pieces": [
        {"id": "p", "task": "Wait for go", "agent": "shell", "machine": "alpha",
         "run": f'while [ ! -f {go} ]; do sleep 0.1; done; echo 1 > p.txt'}]}))
    assert balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start").code == 0
    assert balanced(repo, "engine", "--once").code == 0
    (job,) = all_jobs(Repo.discover(repo)).values()
    assert job.state == "running" and job.machine == "alpha", job

    # The key the SSH config names is one the machine does not know; and alpha has been out of reach "long".
    config = sealed / ".ssh" / "config"
    right = config.read_text()
    key = other_key(tmp_path)
    config.write_text(f"Host alpha\n    HostName 127.0.0.1\n    Port {alpha.port}\n    User {alpha.user}\n"
                      f"    IdentityFile {key}\n    IdentitiesOnly yes\n"
                      f"    UserKnownHostsFile {alpha.folder.parent / 'known_hosts'}\n")
    shut(config)
    state = Repo.discover(repo).state_dir
    (state / "out-of-reach.json").write_text(json.dumps({"alpha": time.time() - 3600}))
    assert balanced(repo, "engine", "--once").code == 0

    (job,) = all_jobs(Repo.discover(repo)).values()
    assert job.state == "running", f"held, not lost: {job}"
    h = held.held(Repo.discover(repo))["alpha"]
    assert h["kind"] == "key" and h["fix"] == f"ssh-add {key}; ssh alpha true", h
    inbox = balanced(repo, "inbox").out
    assert inbox.count("alpha is held: SSH refused its key (") == 1, inbox
    assert f"run `ssh-add {key}; ssh alpha true`" in inbox
    assert balanced(repo, "engine", "--once").code == 0  # a second pass: still held, told once
    assert balanced(repo, "inbox").out.count("alpha is held") == 1
    board = balanced(repo, "board").out
    assert "alpha is held: SSH refused its key" in board, board
    shown = balanced(repo, "machines").out
    assert "held: SSH refused its key" in shown, shown

    # Nothing new goes there: a piece that names no machine goes to local, saying why alpha is skipped.
    (tmp_path / "more.yaml").write_text(json.dumps({"task": "More", "pieces": [
        {"id": "q", "task": "Write q", "agent": "shell", "run": "echo q > q.txt"}]}))
    placed = balanced(repo, "plan", str(tmp_path / "more.yaml"), "--json")
    assert placed.code == 0, placed
    (piece,) = json.loads(placed.out)["pieces"]
    assert piece["placed"] == "local" and "alpha: held: SSH refused its key" in piece["why"], piece

    # The key is right again: the hold clears, the worker finishes and its piece lands once.
    config.write_text(right)
    shut(config)
    go.write_text("go\n")
    assert balanced(repo, "engine", "--until-idle").code == 0
    assert held.held(Repo.discover(repo)) == {}
    jobs = {j.piece: j for j in all_jobs(Repo.discover(repo)).values()}
    assert jobs["p"].state == "landed" and jobs["p"].attempt == 1, jobs["p"]
    assert git(repo, "show", "main:p.txt") == "1"
    inbox = balanced(repo, "inbox").out
    assert inbox.count("alpha answers again: it is no longer held") == 1, inbox


def test_a_changed_host_key_holds_the_machine_until_it_answers(alpha: Machine, sealed: Path,
                                                               tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    assert balanced(repo, "machines", "add", "alpha").code == 0
    assert balanced(repo, "tick", "alpha").code == 0
    known = alpha.folder.parent / "known_hosts"
    right = known.read_text()
    stranger = other_key(tmp_path).with_suffix(".pub").read_text().split()
    known.write_text("".join(f"{line.split()[0]} {stranger[0]} {stranger[1]}\n" if f":{alpha.port} " in line
                             else line + "\n" for line in right.splitlines()))
    shut(sealed / ".ssh" / "config")
    try:
        why = probe.unanswering(Repo.discover(repo), ["alpha"])["alpha"]
        assert why.startswith("held: its host key changed (Host key verification failed."), why
        assert f"run `ssh-keygen -R '[127.0.0.1]:{alpha.port}' -f {known}; ssh alpha true`" in why, why
        assert "held: its host key changed" in balanced(repo, "machines").out
    finally:
        known.write_text(right)
    shown = balanced(repo, "machines").out
    assert "held" not in shown and held.cleared(Repo.discover(repo)).keys() == {"alpha"}, shown
