"""An ending process lets its runner sessions go without waiting for them: each runner reads the end of its stdin
and exits on its own."""

from __future__ import annotations

from pathlib import Path

from git_balanced import process
from git_balanced.engine.workers import RUNS_DIR
from git_balanced.git import Repo
from git_balanced.machines.reach.hosts import LocalHost
from git_balanced.machines.reach.routes import Reach
from tests.support.builders import make_repo
from tests.support.wait import wait_until


def test_closing_without_waiting_lets_the_runner_end_on_its_own(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead", {"README.md": "sample\n"}))
    host = LocalHost(repo)
    host.call("stop", {"job": "nobody", "runs_dir": RUNS_DIR})  # through a session
    runner = host.pool().idle[0].process
    process.part(Reach).close(wait=False)
    wait_until(lambda: runner.poll() is not None, 30, "the runner to end once its stdin ended")
    assert runner.returncode == 0, "it ended as a session ends, not killed"
