"""Reaching a worker: `tell` leaves a line in its run folder through its runner and its agent's next PreToolUse
reads it (once); a shell worker cannot hear and says so; `logs` reads the log where the worker runs and shows an
agent's JSON events as turns, tool calls and results."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.widgets import DataTable, RichLog

from git_balanced.agents import wiring
from git_balanced.agents.transcript import render
from git_balanced.board_app.app import BoardApp
from git_balanced.lead import open_lead
from git_balanced.shipped import pretool
from tests.support.cli import balanced
from tests.support.plans import engine, lead_repo, piece, plan
from tests.support.runner_calls import call
from tests.support.streams import STREAMS
from tests.support.wait import wait_until


def test_a_told_line_is_read_at_the_next_tool_call_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    gone = call("tell", {"job": "j1", "text": "Use the v2 API.", "runs_dir": str(runs)})
    assert gone == {"error": "the job j1 has no run folder here"}
    (runs / "j1").mkdir(parents=True)
    assert "told" in call("tell", {"job": "j1", "text": "Use the v2 API.", "runs_dir": str(runs)})
    assert call("tell", {"job": "j1", "text": "  ", "runs_dir": str(runs)})["error"].endswith("nothing to tell")

    def next_step() -> dict | None:
        return pretool.pre_tool_use({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(tmp_path)},
                                    wiring.hook_rules(), str(tmp_path), None, str(runs / "j1"),
                                    lambda *_: pretool.decision("allow", "asked"))

    said = next_step()
    assert said is not None and said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert said["hookSpecificOutput"]["permissionDecisionReason"].startswith(
        "Your lead tells you, while you work:\n- Use the v2 API.\nThis tool call was held back only so")
    assert next_step() is None, "heard once: the next call goes on as it would have"


def test_logs_reads_a_running_worker_and_tell_refuses_a_shell_one(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("api", "echo working on the api; sleep 60")], "--start").code == 0
    assert engine(repo, "--once").code == 0
    try:
        shown = wait_until(lambda: "working on the api" in (out := balanced(repo, "logs", "e1").out) and out, 30,
                           "the worker's log to have its first line")
        assert shown.splitlines() == ["working on the api"], shown
        told = balanced(repo, "tell", "e1", "Use the v2 API.")
        assert told.code == 1 and "api (" in told.err and "is a shell worker: it runs its command and reads " \
            "nothing, so it cannot hear you." in told.err, told
        tool = json.loads(balanced(repo, "mcp", "--call", "logs", json.dumps({"job": "e1"})).out)
        assert tool["lines"] == ["working on the api"] and tool["state"] == "running" and tool["found"] is True
        assert "working on the api" in asyncio.run(_pane_of(repo, "api")), "the board's app shows it in its pane"
    finally:
        assert balanced(repo, "stop", "e1").code == 0
    late = balanced(repo, "tell", "e1", "too late")
    assert late.code == 1 and "is stopped, not running, so there is nobody to tell." in late.err, late


async def _pane_of(repo: Path, piece_id: str) -> str:
    """The text of the worker pane the board's app opens on `piece_id`'s worker."""
    app = BoardApp(open_lead(str(repo)), poll=60)
    async with app.run_test(size=(80, 24)) as pilot:
        app.query_one("#running", DataTable).focus()
        app.query_one("#running", DataTable).move_cursor(row=[r.cells[2] for r in app.rows["running"]].index(piece_id))
        await pilot.press("l")
        await pilot.pause()
        return "\n".join(line.text for line in app.screen.query_one(RichLog).lines)


def test_an_agents_events_read_as_turns_tool_calls_and_results() -> None:
    claude = render((STREAMS / "claude-success.jsonl").read_text())
    assert claude[1:] == ["  → Write /home/ada/work/tree/hello.txt",
                          "  ← File created successfully at: /home/ada/work/tree/hello.txt (file state is current in "
                          "your context — no need to Read it back)",
                          "agent: I wrote hello.txt.", "── done: success · $0.0064 · 2 turns"]
    pi = render((STREAMS / "pi-success.jsonl").read_text())
    assert pi[1:4] == ["lead: Write hello.txt saying hello, then stop.", "  → write /home/ada/work/tree/hello.txt",
                       "  ← Successfully wrote 6 bytes to /home/ada/work/tree/hello.txt"]
    codex = render((STREAMS / "codex-success.jsonl").read_text())
    assert "  → /bin/bash -lc 'echo ran > shell.txt'" in codex and "agent: I wrote hello.txt." in codex
