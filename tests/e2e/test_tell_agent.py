"""A running Claude Code worker hears what the lead tells it: `git balanced tell` while it runs a command, and
its next tool call hands it the line (its PreToolUse hook), which its model reads before it goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import balanced
from tests.support.model_server import run_shell, say
from tests.support.plans import background_engine, lead_repo, plan
from tests.support.real_agents import agent_piece, bodies, commit_turn, real_agents, rows
from tests.support.wait import wait_until


def test_a_running_agent_worker_hears_a_told_line_at_its_next_step(tmp_path: Path, agent_bin: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {"claude": [run_shell("sleep 4"), run_shell("true"), commit_turn("src/w.txt", "v2"),
                        say("I used the v2 API, as my lead said.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("w", "claude")], "--start").code == 0
        with background_engine(repo, tmp_path / "engine.log"):
            wait_until(lambda: servers.claude.main_requests(), 120, "the worker's first turn",
                       said=lambda: (tmp_path / "engine.log").read_text())
            told = balanced(repo, "tell", "e1", "Use the v2 API.")
            assert told.code == 0 and told.out.startswith("Told w ("), told
            wait_until(lambda: rows(repo)["w"]["state"] == "landed", 180, "the worker to land",
                       said=lambda: json.dumps(rows(repo)))
    heard = [b for b in bodies(servers.claude) if "Use the v2 API." in b]
    assert heard and "Your lead tells you, while you work" in heard[0], "its model read the line"
    assert "Use the v2 API." not in bodies(servers.claude)[1], "not before it was told"
