"""A machine lost mid-run: its workers count as lost, their pieces land elsewhere, and nothing lands twice."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import Job, all_jobs
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machine, Machines, sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\nlost_after = 1\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        yield ms


def start_plan(repo: Path, tmp_path: Path, slow: Machine, seconds: int) -> None:
    """Six pieces spread over local, alpha and beta; on `slow` they take `seconds`, elsewhere no time."""
    pieces = [{"id": f"p{i}", "task": f"Write f{i}.txt", "agent": "shell",
               "run": f'[ "$(id -un)" = "{slow.user}" ] && sleep {seconds}; echo {i} > f{i}.txt'}
              for i in range(6)]
    (tmp_path / "plan.yaml").write_text(json.dumps({"task": "Lose a machine", "pieces": pieces}))
    ran = balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start")
    assert ran.code == 0 and ran.out.count(f" {slow.name}: ") == 2, ran.out


def engine(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", "--until-idle"], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_running_on(m: Machine, jobs: int) -> None:
    """Until `jobs` workers there have started their agent (their run folders hold an agent pid)."""
    wait_until(lambda: len(list((m.home / ".balanced" / "runs").glob("*/agent_pid"))) >= jobs, 30,
               f"{jobs} workers on {m.name} to start their agent")


def landings(repo: Path) -> list[dict]:
    out = git(repo, "log", "--first-parent", "--notes=balanced", "--format=%N", "main")
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def jobs_of(repo: Path) -> list[Job]:
    return sorted(all_jobs(Repo.discover(repo)).values(), key=lambda j: (j.piece, j.attempt))


def test_a_killed_machine_loses_its_workers_and_their_pieces_land_elsewhere(
        machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    wire_lead(repo, machines, SETTINGS)
    alpha = machines.by_name("alpha")
    start_plan(repo, tmp_path, alpha, 60)
    eng = engine(repo)
    try:
        wait_running_on(alpha, 2)
        alpha.kill()  # its sshd, its sessions and every process of its user
        out, _ = eng.communicate(timeout=60)
    finally:
        eng.kill()
    assert eng.returncode == 0, out
    notes = landings(repo)
    assert sorted(n["piece"] for n in notes) == [f"p{i}" for i in range(6)], "each piece landed once"
    jobs = jobs_of(repo)
    lost = [j for j in jobs if j.machine == "alpha"]
    assert len(lost) == 2 and all(j.state == "retried" and j.failure == "lost" for j in lost), lost
    for j in lost:
        again = next(x for x in jobs if x.previous == j.id)
        assert again.attempt == 2 and again.machine in ("local", "beta") and again.state == "landed", again
        assert next(n for n in notes if n["piece"] == j.piece)["machine"] == again.machine
        history = git(repo, "log", "--format=%s", f"refs/balanced/jobs/{j.id}")
        assert f"{j.piece}: alpha is lost" in history, history
    inbox = balanced(repo, "inbox").out
    assert inbox.count("alpha could not be reached for a while, so its worker counts as lost") == 2, inbox
    for j in lost:
        again = next(x for x in jobs if x.previous == j.id)
        assert f"Tries again on another machine: attempt 2, {again.machine}: " in inbox, "the lead hears where"
    assert "Plan 'Lose a machine' is done: 6 landed" in inbox

    # alpha comes back (its workers died with it): nothing is started or landed again.
    tip = git(repo, "rev-parse", "main")
    alpha.restart()
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0 and git(repo, "rev-parse", "main") == tip and len(landings(repo)) == 6


def test_a_worker_that_comes_back_later_is_not_landed_twice(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    wire_lead(repo, machines, SETTINGS)
    alpha = machines.by_name("alpha")
    start_plan(repo, tmp_path, alpha, 3)
    eng = engine(repo)
    try:
        wait_running_on(alpha, 2)
        alpha.cut()  # the network goes; the workers there go on and finish on their own
        out, _ = eng.communicate(timeout=60)
    finally:
        eng.kill()
    assert eng.returncode == 0, out
    assert sorted(n["piece"] for n in landings(repo)) == [f"p{i}" for i in range(6)]
    lost = [j for j in jobs_of(repo) if j.machine == "alpha"]
    results = [alpha.home / ".balanced" / "runs" / j.id / "result.json" for j in lost]
    wait_until(lambda: all(r.exists() for r in results), 30, "the cut-off workers to finish on their own")
    assert all(json.loads(r.read_text())["commits"] == 1 for r in results), "they committed their work there"

    tip = git(repo, "rev-parse", "main")
    alpha.restart()
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran
    assert git(repo, "rev-parse", "main") == tip, "the lost workers' branches are not landed"
    assert len(landings(repo)) == 6
    assert [j.state for j in jobs_of(repo) if j.machine == "alpha"] == ["retried", "retried"]
    # The queue's own guard: a branch whose commits are in the lead already says so, and nothing moves.
    landed = next(j for j in jobs_of(repo) if j.previous == lost[0].id)
    source = landed.fetched_ref or f"refs/heads/{landed.branch}"
    git(repo, "branch", "again", source)
    ran = balanced(repo, "land", "again")
    assert ran.code == 0 and "already   again: everything on it is in main already" in ran.out, ran
    assert git(repo, "rev-parse", "main") == tip


def test_a_lost_piece_goes_on_elsewhere_from_what_it_had_brought_back(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    alpha = machines.by_name("alpha")
    assert balanced(repo, "machines", "add", "alpha", "--preference", "prefer").code == 0
    wire_lead(repo, machines, SETTINGS.replace('check = "true"', 'check = "test -f ok.txt"'))
    # Attempt 1 (alpha) commits a.txt and fails the check (a shell piece on an unmoved base: not tried again
    # until you say so); attempt 2 (alpha again, by `retry`) goes on from there and hangs, alpha dies; attempt 3
    # must start from a.txt, which only attempt 1's fetched branch holds.
    run = f'if [ -f a.txt ]; then [ "$(id -un)" = "{alpha.user}" ] && sleep 60; echo ok > ok.txt; ' \
          'else echo 1 > a.txt; fi'
    (tmp_path / "plan.yaml").write_text(json.dumps({"task": "Carry on", "pieces": [
        {"id": "p", "task": "Make a.txt, then ok.txt", "agent": "shell", "run": run}]}))
    assert " alpha: " in balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start").out
    assert balanced(repo, "engine", "--until-idle").code == 1, "attempt 1 failed its check"
    assert balanced(repo, "retry", "balanced/p").code == 0
    eng = engine(repo)
    try:
        def hung() -> bool:
            assert eng.poll() is None, "the engine ended before attempt 2 hung on alpha"
            return any(Path(f"/proc/{pid}/comm").read_text().strip() == "sleep" for pid in alpha.processes()
                       if Path(f"/proc/{pid}/comm").exists())

        wait_until(hung, 30, "attempt 2 to hang on alpha")
        alpha.kill()
        out, _ = eng.communicate(timeout=60)
    finally:
        eng.kill()
    assert eng.returncode == 0, out
    jobs = jobs_of(repo)
    assert [(j.attempt, j.machine, j.state) for j in jobs][:2] == [(1, "alpha", "retried"), (2, "alpha", "retried")]
    assert jobs[1].failure == "lost" and jobs[2].attempt == 3 and jobs[2].machine != "alpha"
    assert jobs[2].state == "landed", jobs[2]
    assert git(repo, "show", "main:a.txt") == "1" and git(repo, "show", "main:ok.txt") == "ok", \
        "the third attempt started from what the first had brought back"
