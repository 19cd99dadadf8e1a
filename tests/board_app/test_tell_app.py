"""Telling a running worker a line from the board's app: the real Claude Code works as a worker under a running
engine (against the scripted model server); the person selects it under Running, presses `t`, types the line and
Enter, and its model reads the line at its next step, before it goes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from git_balanced.board_app.app import BoardApp
from git_balanced.board_app.screens import Prompt
from git_balanced.lead import open_lead
from tests.board_app.toasts import notices_shown
from tests.support.model_server import run_shell, say
from tests.support.plans import background_engine, lead_repo, plan
from tests.support.real_agents import agent_piece, bodies, commit_turn, real_agents, rows
from tests.support.wait import wait_until


def test_t_in_the_app_tells_a_running_agent_worker_a_line_its_model_reads(tmp_path: Path, agent_bin: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    told = tmp_path / "told"  # the first command waits for it (at most a minute): told while it runs, however slow
    wait = f"for i in $(seq 300); do [ -e {told} ] && break; sleep 0.2; done"
    turns = {"claude": [run_shell(wait), run_shell("true"), commit_turn("src/w.txt", "v2"),
                        say("I used the v2 API, as my lead said.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("w", "claude")], "--start").code == 0
        with background_engine(repo, tmp_path / "engine.log"):
            wait_until(lambda: servers.claude.main_requests(), 120, "the worker's first turn",
                       said=lambda: (tmp_path / "engine.log").read_text())

            async def drive() -> list[str]:
                app = BoardApp(open_lead(str(repo)), poll=60)
                async with app.run_test(size=(100, 30), notifications=True) as pilot:
                    app.query_one("#running", DataTable).focus()
                    await pilot.pause()
                    assert [str(r.cells[2]) for r in app.rows["running"]] == ["w"]
                    await pilot.press("t")
                    assert isinstance(app.screen, Prompt)
                    app.screen.query_one(Input).value = "Use the v2 API."
                    await pilot.press("enter")
                    return await notices_shown(app, pilot)

            said = asyncio.run(drive())
            told.touch()
            assert said == ["Told w: its agent reads it at its next tool call."], said
            wait_until(lambda: rows(repo)["w"]["state"] == "landed", 180, "the worker to land",
                       said=lambda: json.dumps(rows(repo)))
    heard = [b for b in bodies(servers.claude) if "Use the v2 API." in b]
    assert heard and "Your lead tells you, while you work" in heard[0], "its model read the line"
    assert "Use the v2 API." not in bodies(servers.claude)[1], "not before it was told"
