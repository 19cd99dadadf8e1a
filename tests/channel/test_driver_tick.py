"""A headless lead's (or the chief's) record names its driver by pid and start tick: a pid the kernel gave to a
later process does not read as the lead running. With a real process, in a plain repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

from git_balanced import proc
from git_balanced.channel import presence
from git_balanced.files import write_atomic
from git_balanced.git import Repo
from git_balanced.kit import headless
from git_balanced.lead import Lead
from tests.support.builders import make_repo


def test_a_pid_taken_by_another_process_is_not_the_driver(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    lead = Lead(repo, "main")
    pid = proc.spawn_detached(["sleep", "30"], cwd=tmp_path, log=tmp_path / "driver.log")
    try:
        rec = {"agent": "claude", "state": "waiting", **presence.driver(pid)}
        assert rec["tick"] and presence.driver_alive(rec) and headless.alive(rec)
        # The same pid with another start tick: a later process that got the driver's pid.
        reused = {**rec, "tick": str(int(rec["tick"]) + 1)}
        assert not presence.driver_alive(reused) and not headless.alive(reused)
        assert presence.driver_alive({k: v for k, v in rec.items() if k != "tick"}), "an older record: by pid"
        write_atomic(presence.lead_dir(repo, "main") / "lead.json", json.dumps(reused))
        assert presence.cannot_answer(repo, "main", 60.0) == "its lead is not running"
        write_atomic(presence.lead_dir(repo, "main") / "lead.json", json.dumps(rec))
        assert presence.cannot_answer(repo, "main", 60.0) is None
        assert headless.read(lead) == rec
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert not presence.driver_alive(rec), "ended"
