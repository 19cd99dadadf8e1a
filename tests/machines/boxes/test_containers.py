"""Shell pieces in real containers on this machine: each job in a fresh box of the image, landed through the
check, kept away from the lead's repository, the other jobs and the network, run again when its box is killed,
and no box left behind."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.reach import copies
from git_balanced.machines.reach.boxdoor import Container
from git_balanced.machines.reach.boxhost import box_labels
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.wait import wait_until

pytestmark = pytest.mark.boxes  # every test here starts containers

SETTINGS = '[worktree]\ncheck = "test ! -e broken.txt"\n\n[balanced]\nagent = "shell"\n'


def lead_with_box(tmp_path: Path, image: str, *extra: str) -> Path:
    """A lead whose only ticked machine is `box`, a container machine of `image`, readied."""
    repo = make_repo(tmp_path / "proj", {".magnum/settings.toml": SETTINGS, "f1.txt": "0\n"})
    for args in (["allow", "--yes"], ["machines", "add", "box", "--container", image, *extra], ["tick", "box"],
                 ["untick", "local"], ["ready", "box"]):
        ran = balanced(repo, *args)
        assert ran.code == 0, f"git balanced {' '.join(args)} failed:\n{ran.out}\n{ran.err}"
    return repo


def start(repo: Path, tmp_path: Path, pieces: list[dict[str, str]]) -> None:
    for p in pieces:
        p.setdefault("agent", "shell")
    (tmp_path / "plan.yaml").write_text(json.dumps({"task": "In boxes", "pieces": pieces}))
    ran = balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start")
    assert ran.code == 0, ran.out + ran.err


def boxes_of(repo: Path) -> list[str]:
    """The containers labelled with this repository, running or not."""
    ident = copies.identity(Repo.discover(repo)).short
    out = subprocess.run(["podman", "ps", "-a", "--filter", f"label=balanced.repo={ident}", "--format",
                          "{{.Names}}"], capture_output=True, text=True, check=True).stdout
    return out.split()


def test_pieces_land_from_fresh_boxes_that_reach_nothing_of_the_lead_and_none_is_left(
        podman: str, tmp_path: Path) -> None:
    repo = lead_with_box(tmp_path, podman)
    listening = socket.create_server(("127.0.0.1", 0))  # on this machine's loopback: a box without network
    port = listening.getsockname()[1]
    probe = (f"{{ test -e {repo}/.git && echo lead-seen || echo lead-hidden; "
             "ls /root/.balanced/worktrees | wc -l; ls -d /root/.balanced/copies/*/* | wc -l; "
             f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' 2>/dev/null "
             "&& echo net-reached || echo net-refused; "
             "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)' 2>/dev/null "
             "&& echo net-reached || echo net-refused; } > probe.txt; echo 1 > f1.txt")
    start(repo, tmp_path, [{"id": "write", "task": "Write f2", "run": "echo 2 > f2.txt; echo 1 > f1.txt"},
                           {"id": "probe", "task": "Probe", "run": probe}])
    ran = balanced(repo, "engine", "--until-idle")
    listening.close()
    assert ran.code == 0, ran.out + ran.err
    jobs = {j.piece: j for j in all_jobs(Repo.discover(repo)).values()}
    assert {p: j.state for p, j in jobs.items()} == {"write": "landed", "probe": "landed"}, ran.out
    assert all(j.machine == "box" for j in jobs.values())
    assert git(repo, "show", "main:f2.txt") == "2"
    # Its own worktree and branch copy only; not the lead's folder, not this machine's loopback, no network.
    assert git(repo, "show", "main:probe.txt").split("\n") == ["lead-hidden", "1", "1", "net-refused",
                                                                "net-refused"]
    assert boxes_of(repo) == [], "every box was removed once its branch was fetched"
    board = balanced(repo, "board").out
    assert "@box" in board, board
    doctor_and_ready_remove_boxes_of_ended_jobs(repo, podman)


def test_a_killed_box_runs_its_piece_again_in_a_new_one(podman: str, tmp_path: Path) -> None:
    repo = lead_with_box(tmp_path, podman)
    start(repo, tmp_path, [{"id": "slow", "task": "Write f1 slowly",
                            "run": "touch started; sleep 3; rm started; echo 1 > f1.txt"}])
    engine = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", "--until-idle"], cwd=repo,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = wait_until(lambda: boxes_of(repo), 60, "the first box")[0]
        started = ["podman", "exec", first, "sh", "-c", "test -e /root/.balanced/worktrees/*/started"]
        wait_until(lambda: subprocess.run(started, capture_output=True).returncode == 0, 60, "its worker to start")
        subprocess.run(["podman", "kill", first], capture_output=True, check=True)
        out, _ = engine.communicate(timeout=120)
    finally:
        engine.kill()
    assert engine.returncode == 0, out
    jobs = sorted(all_jobs(Repo.discover(repo)).values(), key=lambda j: j.attempt)
    assert [(j.attempt, j.state, j.failure or None) for j in jobs] == [(1, "retried", "crashed"),
                                                                       (2, "landed", None)], out
    assert git(repo, "show", "main:f1.txt") == "1"
    assert boxes_of(repo) == [], "the killed box and the second one are both gone"


def doctor_and_ready_remove_boxes_of_ended_jobs(repo: Path, podman: str) -> None:
    """A box an engine that died left behind is listed and removed by `doctor`, and removed by `ready`."""
    ident = copies.identity(Repo.discover(repo)).short
    kind = Container(BoxSpec("container", podman))

    def leave(job: str) -> str:  # a box an engine that died left behind, labelled as the engine labels them
        name = f"balanced-{ident}-{job}"
        subprocess.run(kind.create(name, box_labels(ident, job, "balanced/gone")), capture_output=True, check=True)
        return name

    left = leave("1m9ended1")
    ran = balanced(repo, "doctor")
    assert ran.code == 1 and f"box:{left}: the box of job 1m9ended1, which ended" in ran.out, ran.out
    assert f"remove: podman rm -f {left}" in ran.out, ran.out
    ran = balanced(repo, "doctor", "--fix", "--yes")
    assert ran.code == 0 and f"removed  box:{left}" in ran.out and boxes_of(repo) == [], ran.out
    left = leave("1m9ended2")
    ran = balanced(repo, "ready", "box")
    assert ran.code == 0 and f"removed 1 boxes of jobs that ended: {left}" in ran.out, ran.out
    assert boxes_of(repo) == []
