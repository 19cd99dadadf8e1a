"""The adapters read the event streams captured from the real CLIs (tests/fixtures/streams/, refreshed by
tests/e2e/test_agents_real.py), and build the command lines DESIGN §5 gives."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.agents import NAMES, get
from git_balanced.agents.base import KINDS, Outcome
from git_balanced.agents.claude import reset_time as claude_reset_time
from git_balanced.agents.codex import CodexAdapter, reset_time
from git_balanced.agents.prices import FALLBACK, PRICES, meter_prices, price
from git_balanced.errors import BalancedError
from git_balanced.shipped.meter import Meter

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"


def read(cli: str, name: str, exit_code: int | None = 1) -> Outcome:
    return get(cli).outcome((STREAMS / f"{cli}-{name}.jsonl").read_text(), exit_code)


# Every capture and the outcome it must read as; `None` exit codes are runs the runner stopped.
EXPECTED = [
    ("claude", "success", 0, "success"), ("claude", "budget", 1, "budget"), ("claude", "turns", 1, "turns"),
    ("claude", "usage-limit", 1, "usage_limit"), ("claude", "plan-window", 0, "success"),
    ("claude", "server-error", 1, "transient"),
    ("claude", "bad-request", 1, "failed"), ("claude", "signin", 1, "signin"),
    ("claude", "rejected-key", 1, "signin"), ("claude", "killed", None, "crashed"),
    ("codex", "success", 0, "success"), ("codex", "budget", None, "budget"),
    ("codex", "usage-limit", 1, "usage_limit"), ("codex", "server-error", 1, "transient"),
    ("codex", "bad-request", 1, "failed"), ("codex", "signin", 1, "signin"),
    ("codex", "rejected-key", 1, "signin"),
    ("pi", "success", 0, "success"), ("pi", "budget", None, "budget"),
    ("pi", "usage-limit", 0, "usage_limit"), ("pi", "server-error", 0, "transient"),
    ("pi", "bad-request", 0, "failed"), ("pi", "signin", 1, "signin"), ("pi", "rejected-key", 0, "signin"),
]


@pytest.mark.parametrize(("cli", "name", "code", "kind"), EXPECTED,
                         ids=[f"{c}-{n}" for c, n, _, _ in EXPECTED])
def test_each_capture_reads_as_its_outcome(cli: str, name: str, code: int | None, kind: str) -> None:
    outcome = read(cli, name, code)
    assert outcome.kind == kind, f"{cli}-{name}: {outcome}"
    assert outcome.summary, "every outcome says something the lead can read"
    assert len(outcome.summary) <= 400


def test_every_outcome_kind_is_covered_by_a_capture_or_a_cut_stream() -> None:
    kinds = {kind for _, _, _, kind in EXPECTED}
    assert kinds == set(KINDS), f"kinds without a capture: {set(KINDS) - kinds}"


def test_every_capture_is_expected() -> None:
    named = {f"{cli}-{name}.jsonl" for cli, name, _, _ in EXPECTED}
    assert {p.name for p in STREAMS.glob("*.jsonl")} == named


# -- Claude ------------------------------------------------------------------------------------------------

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


# -- Codex -------------------------------------------------------------------------------------------------

def test_codex_success_prices_tokens_at_the_models_list_price() -> None:
    o = CodexAdapter(model="gpt-5.4").outcome((STREAMS / "codex-success.jsonl").read_text(), 0)
    assert o.tokens["input"] == 3600 and o.tokens["output"] == 240
    # The meter line (gpt-5.5, the model of the run) wins over the adapter's own guess.
    assert o.cost_usd == pytest.approx(3600 * 5 / 1e6 + 240 * 30 / 1e6)
    bare = "\n".join(line for line in (STREAMS / "codex-success.jsonl").read_text().splitlines()
                     if "balanced.meter" not in line)
    assert CodexAdapter(model="gpt-5.4").outcome(bare, 0).cost_usd == pytest.approx(
        3600 * 2.5 / 1e6 + 240 * 15 / 1e6), "without a meter line, the adapter prices with its model"


def test_codex_usage_limit_message_gives_the_next_such_local_time() -> None:
    o = read("codex", "usage-limit")
    assert "You’ve hit your usage limit" in o.summary
    local = dt.datetime.fromtimestamp(o.reset_at or 0)
    shown = o.summary.rsplit("try again at ", 1)[1].rstrip(".")
    assert local.strftime("%-I:%M %p") == shown


def test_reset_time_rolls_over_midnight_and_reads_dates() -> None:
    now = dt.datetime(2026, 11, 29, 22, 0).timestamp()
    morning = reset_time("You’ve hit your usage limit. … try again at 9:43 AM.", now)
    assert dt.datetime.fromtimestamp(morning or 0) == dt.datetime(2026, 11, 30, 9, 43)
    evening = reset_time("try again at 11:05 PM.", now)
    assert dt.datetime.fromtimestamp(evening or 0) == dt.datetime(2026, 11, 29, 23, 5)
    dated = reset_time("try again at Dec 3rd, 2026 9:43 AM.", now)
    assert dt.datetime.fromtimestamp(dated or 0) == dt.datetime(2026, 12, 3, 9, 43)
    assert reset_time("You’ve hit your usage limit.", now) is None


def test_codex_cut_stream_crashed() -> None:
    text = (STREAMS / "codex-success.jsonl").read_text()
    cut = "\n".join(line for line in text.splitlines()
                    if "turn.completed" not in line and "balanced" not in line)
    o = get("codex").outcome(cut, None)
    assert o.kind == "crashed" and "was stopped" in o.summary


# -- Pi ----------------------------------------------------------------------------------------------------

def test_pi_success_sums_the_cost_of_every_reply() -> None:
    o = read("pi", "success", 0)
    assert o.summary == "I wrote hello.txt."
    assert o.cost_usd == pytest.approx(3 * (1200 * 3 + 80 * 15) / 1e6)
    assert o.tokens["input"] == 3600 and o.tokens["output"] == 240


def test_pi_usage_limit_says_429() -> None:
    o = read("pi", "usage-limit", 0)
    assert o.summary.startswith("429") and o.reset_at is None


def test_pi_cut_stream_crashed() -> None:
    text = (STREAMS / "pi-success.jsonl").read_text()
    lines = text.splitlines()
    last_end = max(i for i, line in enumerate(lines)
                   if '"type":"message_end"' in line and '"assistant"' in line)
    o = get("pi").outcome("\n".join(lines[:last_end]), None)
    assert o.kind == "crashed"


# -- the meter ---------------------------------------------------------------------------------------------

def feed(meter: Meter, path: Path) -> Meter:
    for line in path.read_text().splitlines():
        meter.feed(line)
    return meter


def test_pi_meter_sums_message_end_costs_and_trips_at_the_budget() -> None:
    stream = STREAMS / "pi-success.jsonl"
    assert feed(Meter({"format": "pi", "budget_usd": 1.0}), stream).cost_usd == pytest.approx(0.0144)
    assert not feed(Meter({"format": "pi", "budget_usd": 1.0}), stream).over_budget
    assert feed(Meter({"format": "pi", "budget_usd": 0.01}), stream).over_budget
    assert not feed(Meter({"format": "pi", "budget_usd": None}), stream).over_budget, "no budget, no stop"


def test_codex_meter_follows_the_rollout_of_its_own_thread(tmp_path: Path) -> None:
    thread = "01a2-own-thread"
    day = tmp_path / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-11-29T07-28-41-{thread}.jsonl"
    (day / "rollout-2026-11-29T07-28-40-01a2-other-thread.jsonl").write_text(_token_count(9_000_000, 0))
    meter = Meter({"format": "codex", "budget_usd": 1.0, "prices": meter_prices("gpt-5.5"),
                   "sessions": str(tmp_path / "sessions")})
    rollout.write_text(_token_count(100_000, 1_000))
    assert meter.cost_usd == 0, "before thread.started it knows no rollout"
    meter.feed(json.dumps({"type": "thread.started", "thread_id": thread}))
    meter._last_poll = 0.0
    assert meter.cost_usd == pytest.approx(0.53)
    with rollout.open("a") as f:
        f.write(_token_count(200_000, 2_000))
    meter._last_poll = 0.0
    assert meter.over_budget, "$1.06 at gpt-5.5 prices passes the $1 budget"
    assert json.loads(meter.summary_line())["over_budget"] is True


def test_codex_meter_counts_turn_completed_without_a_rollout(tmp_path: Path) -> None:
    meter = Meter({"format": "codex", "budget_usd": 0.02, "prices": meter_prices("gpt-5.5"),
                   "sessions": str(tmp_path / "none")})
    text = (STREAMS / "codex-success.jsonl").read_text()
    for line in [line for line in text.splitlines() if "balanced" not in line]:
        meter.feed(line)
    assert meter.cost_usd == pytest.approx(0.0252) and meter.over_budget


def test_meter_is_stdlib_only_and_stands_alone(tmp_path: Path) -> None:
    source = Path(__file__).parents[2] / "git_balanced" / "shipped" / "meter.py"
    alone = tmp_path / "meter.py"
    alone.write_text(source.read_text())
    code = ("import json, meter; m = meter.Meter({'format': 'pi', 'budget_usd': 0.001}); "
            "m.feed(json.dumps({'type': 'message_end', 'message': {'role': 'assistant', "
            "'usage': {'cost': {'total': 0.002}}}})); print(m.over_budget)")
    # -S -E -s: no site-packages at all, so only the standard library and the file itself can be found.
    cp = subprocess.run([sys.executable, "-S", "-E", "-s", "-c", code], cwd=tmp_path, capture_output=True,
                        text=True)
    assert cp.stdout.strip() == "True", cp.stderr
    assert "git_balanced" not in source.read_text(), "the meter imports nothing of the package"


def _token_count(inp: int, out: int) -> str:
    total = {"input_tokens": inp, "cached_input_tokens": 0, "output_tokens": out}
    return json.dumps({"type": "event_msg", "payload": {"type": "token_count",
                                                         "info": {"total_token_usage": total}}}) + "\n"


# -- prices ------------------------------------------------------------------------------------------------

def test_prices_known_dated_and_unknown_models() -> None:
    assert price("gpt-5.4") == ("gpt-5.4", PRICES["gpt-5.4"])
    assert price("gpt-5.4-mini-2026-03-05")[0] == "gpt-5.4-mini"
    assert price("gpt-7-unknown") == (FALLBACK, PRICES[FALLBACK]), "an unknown model errs on the dear side"
    assert all(inp >= cached and out >= inp for inp, cached, out in PRICES.values())


# -- command lines -----------------------------------------------------------------------------------------

def build(cli: str, **kw: object):
    args = {"task": "Add a GET /orders endpoint.", "rules": "Stay on your branch.", "model": None,
            "budget_usd": None, "worktree": "/w/tree", "run_dir": "/w/run"}
    args.update(kw)
    return get(cli).build(**args)  # type: ignore[arg-type]


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


def test_codex_command_line() -> None:
    run = build("codex", model="gpt-5.5", budget_usd=2.0)
    assert run.argv[:7] == ["codex", "exec", "--json", "-C", "/w/tree", "--sandbox", "workspace-write"]
    assert run.argv[run.argv.index("-m") + 1] == "gpt-5.5"
    assert run.argv[-1] == "Add a GET /orders endpoint."
    assert run.argv[run.argv.index("-c") + 1] == 'developer_instructions="Stay on your branch."'
    assert run.meter == {"format": "codex", "budget_usd": 2.0, "prices": meter_prices("gpt-5.5")}
    assert "read-only" in build("codex", edit_without_asking=False).argv


def test_pi_command_line() -> None:
    run = build("pi", model="anthropic/claude-sonnet-4-5", budget_usd=1.0, task="-v is a flag")
    assert run.argv[:4] == ["pi", "--mode", "json", "--no-session"]
    assert run.argv[run.argv.index("--provider") + 1] == "anthropic"
    assert run.argv[run.argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert run.argv[run.argv.index("--append-system-prompt") + 1] == "Stay on your branch."
    assert run.argv[-1] == " -v is a flag", "a task is never read as an option"
    assert run.meter == {"format": "pi", "budget_usd": 1.0}
    assert "--tools" in build("pi", edit_without_asking=False).argv


def test_get_names_the_agents() -> None:
    assert set(NAMES) == {"claude", "codex", "pi", "shell"}
    assert [get(name).name for name in NAMES] == list(NAMES)
    with pytest.raises(BalancedError, match="unknown agent 'gemini'"):
        get("gemini")
