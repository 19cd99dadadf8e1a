"""shipped/pids.py's one pid check where the package asks whether a process of its own still runs: a lead's
driver (channel/presence.py) and the engine run a `not now` is for (trust.py). A process that has ended, even
as a zombie nobody reaped, is gone; so is the pid of a run once the kernel gave it to a later process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from git_balanced import trust
from git_balanced.channel import presence
from git_balanced.git import Repo
from git_balanced.shipped import pids
from tests.support.builders import make_repo
from tests.support.wait import wait_until


def test_a_drivers_pid_counts_while_it_runs_and_not_once_it_ended() -> None:
    ended = subprocess.Popen(["true"])  # not waited for: a zombie until the end of this test
    wait_until(lambda: (pids.stat_fields(ended.pid) or ["?"])[0] == "Z", 10, "`true` to end")
    try:
        assert presence.pid_alive(os.getpid()) and pids.alive(os.getpid(), pids.start_tick(os.getpid()), mine=True)
        assert not presence.pid_alive(ended.pid), "an ended driver nobody reaped is not running"
        for junk in (None, 0, -1, "12", 1.5):
            assert not presence.pid_alive(junk), junk
    finally:
        ended.wait()


def test_not_now_ends_with_its_run_even_when_its_pid_is_taken_again(tmp_path: Path) -> None:
    repo = Repo.discover(str(make_repo(tmp_path / "r")))
    cmds = trust.Commands(setup=None, check="true")
    trust.allow(repo, cmds)
    trust.deny_for_now(repo, cmds, os.getpid())
    assert trust.status(repo, cmds) == trust.NOT_NOW, "its run (this process) goes on"
    path = trust._record_path(repo)
    rec = json.loads(path.read_text())
    assert rec["run_tick"] == pids.start_tick(os.getpid())
    path.write_text(json.dumps({**rec, "run_tick": str(int(rec["run_tick"]) + 1)}))
    assert trust.status(repo, cmds) == "allowed", "the pid is a later process's: the run is over"
    old = {k: v for k, v in rec.items() if k != "run_tick"}
    path.write_text(json.dumps(old))
    assert trust.status(repo, cmds) == trust.NOT_NOW, "a record from before ticks goes by its pid alone"


def test_a_not_now_said_before_its_run_binds_the_runs_tick(tmp_path: Path) -> None:
    repo = Repo.discover(str(make_repo(tmp_path / "r")))
    cmds = trust.Commands(setup="true", check=None)
    trust.deny_for_now(repo, cmds, None)
    assert trust.status(repo, cmds) == trust.NOT_NOW, "the next run's, which has not begun"
    trust.bind_run(repo, os.getpid())
    rec = json.loads(trust._record_path(repo).read_text())
    assert (rec["run_pid"], rec["run_tick"]) == (os.getpid(), pids.start_tick(os.getpid()))
    assert trust.status(repo, cmds) == trust.NOT_NOW
