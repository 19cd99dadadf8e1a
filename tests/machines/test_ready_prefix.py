"""An agent `ready` installed into `~/.local/bin` is found by the workers there, though a command run over SSH
does not have that folder on its PATH (the runner puts it first, as a login would)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.builders import git, make_repo
from tests.support.runner_calls import call, status_of
from tests.support.wait import wait_until


def test_the_runner_finds_an_agent_in_the_users_local_bin(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    assert str(home / ".local" / "bin") not in os.environ["PATH"].split(os.pathsep)
    agent = home / ".local" / "bin" / "prefix-agent"
    agent.parent.mkdir(parents=True)
    agent.write_text("#!/bin/sh\necho from the prefix > found.txt\n")
    agent.chmod(0o755)
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    runs = tmp_path / "runs"
    req = {"job": "p1", "repo": str(repo), "worktree": str(tmp_path / "wt" / "p1"), "branch": "balanced/p1",
           "base": git(repo, "rev-parse", "HEAD"), "argv": ["prefix-agent"], "runs_dir": str(runs),
           "commit_leftovers": True, "commit_message": "p1: work"}
    call("start", req)
    st = wait_until(lambda: (s := status_of(runs, "p1"))["state"] == "finished" and s, 30, "p1 to finish")
    assert st["result"]["exit_code"] == 0 and st["result"]["error"] is None, st
    assert git(repo, "show", "balanced/p1:found.txt") == "from the prefix"
