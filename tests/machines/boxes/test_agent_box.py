"""The real Claude Code in a container: the image `image build --agent claude` made, the scripted model server on
this machine's loopback (so this box has the host's network), its key passed by name, its commit landed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from tests.machines.boxes.test_containers import boxes_of
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.model_server import say
from tests.support.plans import engine, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents

pytestmark = pytest.mark.boxes  # every test here starts containers

SETTINGS = '[worktree]\ncheck = "test -s c.txt"\n\n[balanced]\nagent = "claude"\n'


@pytest.mark.agents
def test_a_claude_piece_works_in_a_box_and_lands(podman: str, tmp_path: Path, agent_bin: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {"claude": [commit_turn("c.txt", "from the box"), say("Done.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = make_repo(tmp_path / "proj", {".magnum/settings.toml": SETTINGS})
        passed = [w for k in sorted(os.environ) if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_"))
                  for w in ("--pass-env", k)]
        for args in (["allow", "--yes"],
                     ["machines", "add", "box", "--container", podman, "--network", "host", *passed],
                     ["tick", "box"], ["untick", "local"], ["ready", "box"]):
            ran = balanced(repo, *args)
            assert ran.code == 0, f"git balanced {' '.join(args)} failed:\n{ran.out}\n{ran.err}"
        assert "agents: claude" in ran.out, ran.out
        ran = plan(repo, [agent_piece("c", "claude")], "--start")
        assert ran.code == 0 and " box: " in ran.out, ran.out
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
    [job] = all_jobs(Repo.discover(repo)).values()
    assert (job.machine, job.state) == ("box", "landed"), ran.out
    assert git(repo, "show", "main:c.txt") == "from the box"
    assert servers.claude.requests, "Claude Code in the box asked the scripted server on this machine"
    assert boxes_of(repo) == []
