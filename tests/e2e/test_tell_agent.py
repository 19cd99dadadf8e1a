"""A running Claude Code worker hears what the lead tells it, from the command line and from the board's app, in
one run: while it runs a command, `git balanced tell` posts one line and the app's `t` (the worker selected under
Running, the line typed, Enter) another; its next tool call hands it both (its PreToolUse hook), and its model
reads them before it goes on."""

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
from tests.support.cli import balanced
from tests.support.model_server import run_shell, say
from tests.support.plans import background_engine, lead_repo, plan
from tests.support.real_agents import agent_piece, bodies, commit_turn, real_agents, rows
from tests.support.wait import wait_until

LINES = ("Use the v2 API.", "Name it w2.")  # told from the command line, then from the app


def told_in_the_app(repo: Path, line: str) -> list[str]:
    """Select the worker under Running in the board's app, press `t`, type the line and Enter: what it said."""

    async def drive() -> list[str]:
        app = BoardApp(open_lead(str(repo)), poll=60)
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            app.query_one("#running", DataTable).focus()
            await pilot.pause()
            assert [str(r.cells[2]) for r in app.rows["running"]] == ["w"]
            await pilot.press("t")
            assert isinstance(app.screen, Prompt)
            app.screen.query_one(Input).value = line
            await pilot.press("enter")
            return await notices_shown(app, pilot)

    return asyncio.run(drive())


def test_a_running_agent_worker_hears_lines_told_from_the_cli_and_the_app_at_its_next_step(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
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
            cli = balanced(repo, "tell", "e1", LINES[0])
            assert cli.code == 0 and cli.out.startswith("Told w ("), cli
            said = told_in_the_app(repo, LINES[1])
            told.touch()
            assert said == ["Told w: its agent reads it at its next tool call."], said
            wait_until(lambda: rows(repo)["w"]["state"] == "landed", 180, "the worker to land",
                       said=lambda: json.dumps(rows(repo)))
    for line in LINES:
        heard = [b for b in bodies(servers.claude) if line in b]
        assert heard and "Your lead tells you, while you work" in heard[0], f"its model read {line!r}"
        assert line not in bodies(servers.claude)[1], "not before it was told"
