"""`engine --detach` (and the MCP tools, through the same start_detached) say an engine runs only when it will
take the work: an engine in its last pass, or asked to stop, is followed by a new one, and the plan runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced.engine import background
from tests.support.cli import balanced
from tests.support.plans import engine, jobs_of, lead_repo, piece, plan
from tests.support.wait import wait_until


def _held_landing(tmp_path: Path) -> tuple[Path, Path]:
    """A lead whose piece `a` finished and waits to land, with a check that runs until the test creates the
    gate file given back with the repository: what the test does while a landing is checked happens, however
    slow the machine, before that check ends."""
    gate = tmp_path / "gate"
    repo = lead_repo(tmp_path, check=f"while [ ! -e {gate} ]; do sleep 0.05; done; ! grep -rq BAD src")
    assert plan(repo, [piece("a", "echo a > src/a.txt")], "--start").code == 0
    assert engine(repo, "--once").code == 0  # starts the worker
    runs = Path(os.environ["HOME"]) / ".balanced" / "runs"
    wait_until(lambda: list(runs.glob("*/result.json")), 30, "the worker of a to end")
    return repo, gate


def _open_when_the_starter_waits(monkeypatch: pytest.MonkeyPatch, gate: Path) -> None:
    """Opens the gate when a starter in this process first asks whether the engine it found is on its way out
    (it then waits for it): the old engine's check ends during that wait, as a short check would, however slow
    the machine."""
    asked = background.EngineLock.exiting

    def exiting(lock: background.EngineLock, pid: int) -> bool:
        gate.touch()
        return asked(lock, pid)

    monkeypatch.setattr(background.EngineLock, "exiting", exiting)


def _engine_proc(repo: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", *args], cwd=repo,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _checking(repo: Path) -> bool:
    return any((Path(os.environ["HOME"]) / ".balanced" / "worktrees").glob("*/scratch-land-0/src/a.txt"))


def _lands(repo: Path, pid: str) -> None:
    wait_until(lambda: [j for j in jobs_of(repo, pid) if j["state"] == "landed"], 90, f"{pid} to land",
               said=lambda: jobs_of(repo, pid))


def test_detach_against_an_engine_in_its_one_pass_starts_one_that_takes_the_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, gate = _held_landing(tmp_path)
    old = _engine_proc(repo, tmp_path / "old.log", "--once")
    try:
        wait_until(lambda: _checking(repo), 30, "the one pass to be checking a's landing")
        assert plan(repo, [piece("b", "echo b > src/b.txt")], "--start", task="Another").code == 0

        _open_when_the_starter_waits(monkeypatch, gate)
        r = balanced(repo, "engine", "--detach")
        assert r.code == 0, r
        assert "runs already" not in r.out, "the engine in its last pass would not take the plan: " + r.out
        assert f"(pid {old.pid})" not in r.out and "runs in the background" in r.out, r.out
        _lands(repo, "a")
        _lands(repo, "b")
        assert old.wait(timeout=30) == 0
    finally:
        gate.touch()
        if old.poll() is None:
            old.kill()
        balanced(repo, "engine", "--stop")


def test_detach_against_an_engine_asked_to_stop_starts_one_that_waits_for_it(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The starter waits 1 s for an exiting engine (not 5). The old engine's check runs until the gate opens, after
    # the starter has returned: SIGTERM reaches it mid-check however slow the machine, and the check is longer
    # than the starter's wait, as it must be.
    monkeypatch.setattr(background, "HANDOVER", 1.0)
    repo, gate = _held_landing(tmp_path)
    old = _engine_proc(repo, tmp_path / "old.log")
    try:
        wait_until(lambda: _checking(repo), 30, "the engine to be checking a's landing")
        old.send_signal(signal.SIGTERM)  # as `engine --stop` does; it ends after its pass
        assert plan(repo, [piece("b", "echo b > src/b.txt")], "--start", task="Another").code == 0

        r = balanced(repo, "engine", "--detach")
        assert r.code == 0, r
        assert "runs already" not in r.out and f"(pid {old.pid})" not in r.out, r.out
        gate.touch()  # the checks of the engine that took over pass from now on
        assert old.wait(timeout=60) == 0
        _lands(repo, "a")
        _lands(repo, "b")
    finally:
        gate.touch()
        if old.poll() is None:
            old.kill()
        balanced(repo, "engine", "--stop")


def test_detach_against_a_running_engine_says_it_runs(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    old = _engine_proc(repo, tmp_path / "old.log")
    try:
        pid_file = repo / ".git" / "balanced" / "engine.pid"
        wait_until(lambda: pid_file.exists() and pid_file.read_text().split()[:1] == [str(old.pid)], 30,
                   "the engine to take its lock")
        r = balanced(repo, "engine", "--detach")
        assert r.code == 0 and f"An engine runs already (pid {old.pid})" in r.out, r
    finally:
        balanced(repo, "engine", "--stop")
        old.wait(timeout=30)


def test_the_mcp_plan_tool_never_says_running_for_an_engine_on_its_way_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, gate = _held_landing(tmp_path)
    old = _engine_proc(repo, tmp_path / "old.log", "--once")
    try:
        wait_until(lambda: _checking(repo), 30, "the one pass to be checking a's landing")
        doc = {"task": "Another", "pieces": [piece("b", "echo b > src/b.txt")]}
        _open_when_the_starter_waits(monkeypatch, gate)
        r = balanced(repo, "mcp", "--call", "plan", json.dumps(doc))
        assert r.code == 0, r
        said = json.loads(r.out)["engine"]
        assert said.startswith("started in the background (pid ") and str(old.pid) not in said, said
        _lands(repo, "b")
    finally:
        gate.touch()
        if old.poll() is None:
            old.kill()
        balanced(repo, "engine", "--stop")


def test_an_engine_woken_during_its_last_pass_takes_its_exit_back(tmp_path: Path) -> None:
    from git_balanced.engine.background import EngineLock, wake_stamp
    from git_balanced.lead import open_lead

    lead = open_lead(str(lead_repo(tmp_path)))
    lock = EngineLock(lead)
    assert lock.acquire()
    try:
        woken = wake_stamp(lead)
        time.sleep(0.02)  # past the file system's clock tick
        lead.wake_engine()  # a starter stored work while the pass ran
        assert not lock.leaving(lead, woken), "it looks again"
        assert not lock.exiting(os.getpid()), "and a starter sees it running"
        woken = wake_stamp(lead)
        assert lock.leaving(lead, woken), "nothing new: it may end"
        assert lock.exiting(os.getpid()), "and a starter sees it exiting"
    finally:
        lock.release()
    assert not lock.exiting(os.getpid()) and lock.holder() is None
