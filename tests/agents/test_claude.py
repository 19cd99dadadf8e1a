"""Claude Code's adapter: its command line, and its stream-json log read as an outcome (captures in
tests/fixtures/streams/, refreshed by tests/e2e/test_agents_real.py)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from git_balanced.agents import get
from git_balanced.agents.claude import reset_time as claude_reset_time
from tests.support.streams import STREAMS, build, read


def _claude_refusal(keep: object) -> str:
    """The captured refusal without its rate_limit_event (the CLI drops it for a reset already past), its
    other events passed through `keep`, which may drop or change them."""
    out = []
    for line in (STREAMS / "claude-usage-limit.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["type"] != "rate_limit_event":
            kept = keep(event)  # type: ignore[operator]
            if kept is not None:
                out.append(json.dumps(kept))
    return "\n".join(out) + "\n"


def test_claude_success_carries_cost_tokens_and_last_words() -> None:
    o = read("claude", "success", 0)
    assert o.summary == "I wrote hello.txt."
    assert o.cost_usd == pytest.approx(0.0064), "the CLI's own total_cost_usd"
    assert o.tokens == {"input": 2400, "output": 160, "cache_read": 0, "cache_write": 0}
    assert o.reset_at is None


def test_claude_usage_limit_reads_reset_and_window() -> None:
    o = read("claude", "usage-limit")
    event = next(json.loads(line) for line in (STREAMS / "claude-usage-limit.jsonl").read_text().splitlines()
                 if '"rate_limit_event"' in line)
    reset = event["rate_limit_info"]["resetsAt"]
    assert o.reset_at == reset
    assert o.windows == [{"type": "five_hour", "used_percent": 100.0, "resets_at": reset}]
    assert o.summary.startswith("You've hit your 5-hour limit")


def test_claude_usage_limit_without_its_event_takes_the_reset_of_the_refused_answer() -> None:
    o = get("claude").outcome(_claude_refusal(lambda e: e), 1)
    assert o.kind == "usage_limit", o
    assert o.reset_at == 1795944789, "api_error_params.rate_limit_info.resetsAt, to the second"
    assert o.summary.startswith("You've hit your 5-hour limit")


def test_claude_usage_limit_in_words_alone_reads_the_reset_from_them() -> None:
    # An assistant error and a result with none of the typed fields: only the words say it was the limit.
    typed = ("api_error", "api_error_params", "api_error_status", "api_error_type")

    def plain(event: dict) -> dict:
        event = {k: v for k, v in event.items() if k not in typed}
        text = "You've hit your 5-hour limit · resets 10:50am (UTC)"
        if event["type"] == "assistant":
            event["message"]["content"] = [{"type": "text", "text": text}]
            event["timestamp"] = "2026-12-02T10:20:31.000Z"
        if event["type"] == "result":
            event["result"] = text
        return event

    o = get("claude").outcome(_claude_refusal(plain), 1)
    assert o.kind == "usage_limit", o
    assert o.reset_at == dt.datetime(2026, 12, 2, 10, 50, tzinfo=dt.UTC).timestamp(), \
        "the time it names, the next one after the refusal"


def test_claude_success_that_quotes_a_limit_is_a_success() -> None:
    def quoting(event: dict) -> dict:
        if event["type"] == "result":
            return {**event, "result": "The CLI prints: You've hit your 5-hour limit · resets 10am (UTC)",
                    "is_error": False}
        return event

    stream = (STREAMS / "claude-success.jsonl").read_text().splitlines()
    o = get("claude").outcome("\n".join(json.dumps(quoting(json.loads(x))) for x in stream), 0)
    assert o.kind == "success", o


@pytest.mark.parametrize(("text", "now", "expected"), [
    # A time alone is the next such time after the refusal; the minute it names counts as not yet past.
    ("resets 4:47am (UTC)", "2026-12-02T04:10:00+00:00", "2026-12-02T04:47:00+00:00"),
    ("resets 4:47am (UTC)", "2026-12-02T04:47:39+00:00", "2026-12-02T04:47:00+00:00"),
    ("resets 4:47am (UTC)", "2026-12-02T04:49:00+00:00", "2026-12-03T04:47:00+00:00"),
    ("resets 10pm (UTC)", "2026-12-02T12:00:00+00:00", "2026-12-02T22:00:00+00:00"),
    ("resets 12am (UTC)", "2026-12-02T12:00:00+00:00", "2026-12-03T00:00:00+00:00"),
    ("resets 9:30am (Europe/Paris)", "2026-12-02T07:00:00+00:00", "2026-12-02T08:30:00+00:00"),
    # More than a day away, the CLI names the date, and the year when it is not this one.
    ("resets Dec 3, 9:30pm (UTC)", "2026-12-01T12:00:00+00:00", "2026-12-03T21:30:00+00:00"),
    ("resets Jan 4, 2027, 10am (UTC)", "2026-12-30T12:00:00+00:00", "2027-01-04T10:00:00+00:00"),
])
def test_claude_reads_the_reset_its_words_name(text: str, now: str, expected: str) -> None:
    got = claude_reset_time(f"You've hit your weekly limit · {text}", dt.datetime.fromisoformat(now).timestamp())
    assert got == dt.datetime.fromisoformat(expected).timestamp(), (text, now)


def test_claude_words_without_a_reset_give_none() -> None:
    assert claude_reset_time("You've hit your session limit") is None
    o = get("claude").outcome(_claude_refusal(
        lambda e: {**e, "result": "You've hit your session limit", "api_error_params": None}), 1)
    assert o.kind == "usage_limit" and o.reset_at is None, "the engine then waits its default and tries again"


def test_claude_budget_keeps_what_it_spent() -> None:
    o = read("claude", "budget")
    assert o.cost_usd is not None and o.cost_usd >= 0.10


def test_claude_output_without_events_crashed() -> None:
    o = get("claude").outcome("Error: something broke before any event\n", 1)
    assert o.kind == "crashed"
    assert "exited 1" in o.summary and "something broke" in o.summary


def test_claude_plan_window_is_reported() -> None:
    o = read("claude", "plan-window", 0)
    assert o.kind == "success"
    assert len(o.windows) == 1 and o.windows[0]["type"] == "five_hour"
    assert o.windows[0]["used_percent"] == 84.0 and o.windows[0]["resets_at"] > 1.7e9


def test_claude_command_line() -> None:
    run = build("claude", model="sonnet", budget_usd=0.5, settings_json='{"hooks": {}}')
    assert run.argv[:3] == ["claude", "-p", "Add a GET /orders endpoint."]
    for flag, value in (("--output-format", "stream-json"), ("--model", "sonnet"),
                        ("--permission-mode", "acceptEdits"), ("--max-budget-usd", "0.5000"),
                        ("--append-system-prompt", "Stay on your branch."),
                        ("--settings", "{run_dir}/claude-settings.json")):
        assert run.argv[run.argv.index(flag) + 1] == value
    assert "--verbose" in run.argv, "stream-json with -p needs --verbose"
    assert "Bash" in run.argv[run.argv.index("--allowedTools") + 1].split(",")
    assert run.files == {"claude-settings.json": '{"hooks": {}}'} and run.meter is None
    asking = build("claude", edit_without_asking=False)
    assert asking.argv[asking.argv.index("--permission-mode") + 1] == "default"
    assert "Bash" not in asking.argv[asking.argv.index("--allowedTools") + 1]
    assert "--max-budget-usd" not in asking.argv and "--settings" not in asking.argv



def _mode_and_tools(run: object) -> tuple[str, list[str]]:
    argv = run.argv  # type: ignore[attr-defined]
    return argv[argv.index("--permission-mode") + 1], argv[argv.index("--allowedTools") + 1].split(",")


@pytest.mark.parametrize(("level", "mode", "bash", "edits"), [
    ("read-only", "plan", False, False), ("ask", "default", False, False), ("edits", "acceptEdits", False, True),
    ("free", "acceptEdits", True, True), (None, "acceptEdits", True, True)])
def test_claude_is_started_at_its_level(level: str | None, mode: str, bash: bool, edits: bool) -> None:
    got, tools = _mode_and_tools(build("claude", level=level))
    assert got == mode and ("Bash" in tools) == bash and ("Write" in tools) == edits, (level, got, tools)
    assert {"Read", "Glob", "Grep"} <= set(tools), "reading is never held back"
    planning, tools_first = _mode_and_tools(build("claude", level=level, plan_first=True))
    assert planning == "plan" and tools_first == tools, "a plan first changes the mode, never the tools"
    not_editing, held = _mode_and_tools(build("claude", level=level, edit_without_asking=False))
    assert not_editing == ("plan" if level == "read-only" else "default") and held == ["Read", "Glob", "Grep"], \
        "the settings hold it too: the stricter wins"

def _with_subagents(*extra: dict, before_result: bool = True) -> str:
    """The captured success with the worker's own subagent events (shaped as the CLI writes them) put before
    (or after) its final `result`."""
    lines = [json.loads(line) for line in (STREAMS / "claude-success.jsonl").read_text().splitlines()]
    at = next(i for i, e in enumerate(lines) if e["type"] == "result")
    if not before_result:
        at = len(lines)
    lines[at:at] = list(extra)
    return "\n".join(json.dumps(e) for e in lines) + "\n"


def _call(tool_id: str) -> dict:
    return {"type": "assistant", "parent_tool_use_id": None, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": "Agent", "input": {"description": "look", "prompt": "p"}}]}}


def _started(task: str, tool_id: str, **more: object) -> dict:
    return {"type": "system", "subtype": "task_started", "task_id": task, "tool_use_id": tool_id,
            "task_type": "local_agent", **more}


def _ended(task: str, status: str) -> dict:
    return {"type": "system", "subtype": "task_notification", "task_id": task, "status": status}


def test_claude_counts_its_subagents_and_a_turn_that_ends_while_they_run_is_not_finished() -> None:
    claude = get("claude")
    done = claude.outcome(_with_subagents(
        _call("toolu_a"), _started("t1", "toolu_a"), _call("toolu_b"), _started("t2", "toolu_b"),
        _started("t9", "toolu_x", owned_by_subagent=True), _started("b1", "toolu_c", task_type="local_bash"),
        _ended("t1", "completed"), _ended("t2", "failed")), 0)
    assert done.kind == "success" and done.subagents == {"ran": 2, "failed": 1, "unfinished": 0, "waited": 0}, \
        "a subagent's own helpers and background shell commands are not the worker's subagents"
    cut = claude.outcome(_with_subagents(_call("toolu_a"), _started("t1", "toolu_a")), 0)
    assert cut.kind == "failed" and cut.subagents["unfinished"] == 1, cut
    assert cut.summary.startswith("its turn ended while 1 of its subagents still ran"), cut.summary
    late = claude.outcome(_with_subagents(_call("toolu_a"), _started("t1", "toolu_a")) +
                          json.dumps(_ended("t1", "stopped")) + "\n", 0)
    assert late.kind == "failed" and late.subagents == {"ran": 1, "failed": 1, "unfinished": 1, "waited": 0}, late
    assert read("claude", "success", 0).subagents == {}, "none started, none counted"
    run = claude.build(task="t", rules="", model=None, budget_usd=None, worktree="/w", run_dir="/r")
    assert run.env["CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"] == "0", "the CLI waits for its subagents' reports"
