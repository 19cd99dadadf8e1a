"""Placement that knows each machine's agents, over real sshd machines: a piece goes only where its agent is
installed and signed in, this machine is a candidate like any other (Manual only, unticked), and a piece no
ticked machine can take waits, with why, instead of failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.model_server import say
from tests.support.plans import board, engine, inbox_text, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents
from tests.support.sshd import sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd

SHELL = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\ncap = 1\nlost_after = 1\n'


@pytest.mark.agents
def test_claude_pieces_land_on_the_one_machine_that_has_it_signed_in(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # alpha has no agent CLI; beta has Claude Code on its PATH but no sign-in there.
    turns = {"claude": [t for i in range(3) for t in (commit_turn(f"c{i}.txt", str(i)), say("Done."))]}
    with real_agents(monkeypatch, agent_bin, turns), \
            sshd_machines(tmp_path, ["alpha", "beta"], env={"beta": {"PATH": f"{agent_bin}:/usr/bin:/bin"}}) as ms:
        repo = make_repo(tmp_path / "proj")
        wire_lead(repo, ms, SHELL)
        ran = plan(repo, [agent_piece(f"c{i}", "claude") for i in range(3)], "--start")
        assert ran.code == 0, ran
        placed = [line.split()[1] for line in ran.out.splitlines()[1:4]]
        assert placed == ["local:", "local:", "local:"], ran.out
        assert "skipped alpha: Claude Code is not installed there; beta: not signed in to Claude Code" in ran.out
        facts = {r["name"]: r["facts"] for r in json.loads(balanced(repo, "machines", "--json").out)}
        beta = facts["beta"]["agents"]["claude"]
        assert beta["installed"] and not beta["signed_in"] and beta["version"], beta
        assert beta["sign_in_hint"] == "run `ssh -t beta claude /login`", beta
        assert not facts["alpha"]["agents"]["claude"]["installed"] and facts["alpha"]["git"], facts["alpha"]
        assert facts["local"]["agents"]["claude"]["signed_in"], facts["local"]
        shown = balanced(repo, "machines").out
        assert "Claude Code: not installed" in shown and "not signed in: run `ssh -t beta claude /login`" in shown
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
    rows = board(repo)["jobs"]
    assert sorted((r["piece"], r["machine"], r["state"]) for r in rows) == [  # type: ignore[union-attr]
        (f"c{i}", "local", "landed") for i in range(3)], "none failed for a missing CLI"


def test_local_manual_only_and_unticked_local_never_takes_a_lost_piece(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        alpha = ms.by_name("alpha")
        repo = make_repo(tmp_path / "proj")
        assert balanced(repo, "machines", "add", "local", "--preference", "manual-only").code == 0
        wire_lead(repo, ms, SHELL)
        shown = json.loads(balanced(repo, "machines", "--json").out)[0]
        assert shown["name"] == "local" and shown["preference"] == "manual-only" and shown["ticked"], shown
        ran = plan(repo, [{"id": f"p{i}", "task": "t", "agent": "shell", "run": f"echo {i} > p{i}.txt"}
                          for i in range(4)], "--start")
        assert ran.code == 0 and " local: " not in ran.out, ran.out
        assert engine(repo, "--until-idle").code == 0
        jobs = all_jobs(Repo.discover(str(repo))).values()
        assert {j.machine for j in jobs} == {"alpha", "beta"} and all(j.state == "landed" for j in jobs)

        # local unticked (back to normal), beta unticked: a piece lost on alpha waits for a machine.
        assert balanced(repo, "machines", "add", "local", "--preference", "normal").code == 0
        assert balanced(repo, "untick", "local", "beta").code == 0
        ran = plan(repo, [{"id": "slow", "task": "t", "agent": "shell",
                           "run": f'[ "$(id -un)" = "{alpha.user}" ] && sleep 60; echo s > slow.txt'}], "--start")
        assert " alpha: " in ran.out, ran.out
        eng = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", "--until-idle"], cwd=repo,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            wait_until(lambda: list((alpha.home / ".balanced" / "runs").glob("*/agent_pid")), 30,
                       "the worker on alpha to start")
            alpha.kill()
            out, _ = eng.communicate(timeout=90)
        finally:
            eng.kill()
        slow = sorted((j for j in all_jobs(Repo.discover(str(repo))).values() if j.piece == "slow"),
                      key=lambda j: j.attempt)
        assert [(j.machine, j.state) for j in slow] == [("alpha", "retried"), ("", "queued")], (slow, out)
        assert "alpha: it cannot be reached" in slow[1].waits_for or "no machine" in slow[1].waits_for, slow[1]
        assert "slow waits: " in inbox_text(repo), inbox_text(repo)
        assert "waits: " in balanced(repo, "board").out.split("Next", 1)[-1], "under Next"

        assert balanced(repo, "tick", "beta").code == 0  # a machine is there again: it goes on there, not here
        assert engine(repo, "--until-idle").code == 0
        slow = sorted((j for j in all_jobs(Repo.discover(str(repo))).values() if j.piece == "slow"),
                      key=lambda j: j.attempt)
        assert [(j.machine, j.state) for j in slow] == [("alpha", "retried"), ("beta", "landed")], slow
