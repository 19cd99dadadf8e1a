"""A Claude Code worker whose turn ends while its own subagents still run: the real CLI waits for them, takes
a new turn with each report, and only then is the worker finished; the lead hears how many reports it waited
for."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

from git_balanced.agents import get
from git_balanced.agents.subagents import subagents, waited_words
from tests.support.model_server import ModelServer, call_tool, say
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents

HELPER = "HELPER-7Q: list what src holds"  # the subagent's prompt; its requests are routed by it


def test_a_turn_that_ends_while_its_subagent_runs_is_resumed_with_its_report(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {"claude": [
        call_tool("Agent", {"description": "look at src", "prompt": HELPER, "subagent_type": "general-purpose",
                            "run_in_background": True}),
        commit_turn("src/story.txt", "story"),
        say("Committed; my helper still looks at src."),  # the end of its first turn: the helper still runs
        say("Read the helper's report: src holds base.txt and story.txt. Finished."),
    ]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        # The helper answers only once the worker's first turn has ended (its three turns taken).
        servers.claude.route(HELPER, [say("REPORT-7Q: src holds base.txt and story.txt")], after=3)
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("story", "claude")], "--start", budget=1.0).code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
        asked = [json.dumps(r.body) for r in servers.claude.main_requests()]
        helper_asked = [r for r in servers.claude.requests if r.route == HELPER]
    attempts = jobs_of(repo, "story")
    assert [(j["attempt"], j["state"]) for j in attempts] == [(1, "landed")], \
        f"one attempt, finished after the report, never failed and tried again: {attempts}"
    assert helper_asked, "the subagent ran against the scripted model"
    assert "REPORT-7Q" in asked[-1], "the worker's last turn read its subagent's report"
    assert (repo / "src" / "story.txt").read_text() == "story\n"
    text = inbox_text(repo)
    assert "story: its worker ran 1 subagent, none failed; its turn ended while 1 still ran, so it waited for " \
           "1 report and only then finished" in text, text


def _stream(*events: dict) -> list[dict]:
    return list(events)


def _result(text: str, *, origin: str | None = None, tokens: int = 100) -> dict:
    e: dict = {"type": "result", "subtype": "success", "is_error": False, "result": text,
               "total_cost_usd": 0.01, "usage": {"input_tokens": tokens, "output_tokens": 10}}
    if origin:
        e["origin"] = {"kind": "task-notification", "producer": "session-task", "runId": origin}
    return e


def _said(text: str, parent: str | None = None) -> dict:
    return {"type": "assistant", "parent_tool_use_id": parent,
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def test_the_reports_waited_for_are_counted_as_the_cli_writes_them() -> None:
    """The CLI holds a turn's `result` back while subagents run: the first turn's end is its last words."""
    call = {"type": "assistant", "parent_tool_use_id": None, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "Agent", "input": {"prompt": "p"}} for n in (1, 2)]}}
    started = [{"type": "system", "subtype": "task_started", "task_id": f"t{n}", "run_id": f"r{n}",
                "tool_use_id": f"toolu_{n}", "task_type": "local_agent"} for n in (1, 2)]
    done = [{"type": "system", "subtype": "task_notification", "task_id": f"t{n}", "status": "completed"}
            for n in (1, 2)]
    evs = _stream(call, *started, _said("waiting"), _said("helper", "toolu_1"), *done, _said("both read"),
                  _result("waiting", tokens=200), _result("both read", origin="r1"))
    assert subagents(evs) == {"ran": 2, "failed": 0, "unfinished": 0, "waited": 2}
    one_turn = _stream(call, started[0], done[0], _said("read it"), _result("read it"))
    assert subagents(one_turn)["waited"] == 0, "a report read within the turn was not waited for"
    out = get("claude").outcome("\n".join(json.dumps(e) for e in evs), 0)
    assert out.kind == "success" and out.tokens == {"input": 300, "output": 20}, "each turn's tokens count"
    assert waited_words({"waited": 2}) == "; its turn ended while 2 still ran, so it waited for 2 reports and " \
        "only then finished"
    assert waited_words({"waited": 0}) == ""
    run = get("claude").build(task="t", rules="", model=None, budget_usd=None, worktree="/w", run_dir="/r")
    assert run.env["CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"] == "0", "the CLI waits for the subagents' reports"
    assert "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS" not in run.env


def test_the_scripted_server_routes_a_subagents_requests_by_its_prompt() -> None:
    def ask(url: str, first: str, *later: str) -> str:
        messages = [{"role": "user", "content": text} for text in (first, *later)]
        body = {"model": "m", "tools": [{"name": "Write"}], "messages": messages}
        req = urllib.request.Request(f"{url}/v1/messages", json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.read().decode()

    with ModelServer([say("main one"), say("main two")]) as server:
        server.route(HELPER, [say("helper one")], after=1)
        helper = threading.Thread(target=lambda: got.append(ask(server.url, f"{HELPER} please")))
        got: list[str] = []
        helper.start()
        helper.join(0.3)
        assert helper.is_alive(), "the helper waits for the main script's first turn"
        assert "main one" in ask(server.url, "the task")
        helper.join(30)
        assert "helper one" in got[0]
        assert "main two" in ask(server.url, "the task", f"Agent: {HELPER}"), "only the first message counts"
        assert "Done." in ask(server.url, f"{HELPER} again"), "past its turns a route is done"
    assert [r.route for r in server.requests] == ["", HELPER, "", HELPER]
