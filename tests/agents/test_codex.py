"""Codex's adapter: its command line, its JSON events read as an outcome, and the reset its refusal names."""

from __future__ import annotations

import datetime as dt
import json
from datetime import datetime, timedelta

import pytest

from git_balanced.agents import get
from git_balanced.agents.codex import CodexAdapter, reset_time
from git_balanced.agents.prices import meter_prices
from tests.support.streams import STREAMS, build, read


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


def test_codex_cut_stream_crashed() -> None:
    text = (STREAMS / "codex-success.jsonl").read_text()
    cut = "\n".join(line for line in text.splitlines()
                    if "turn.completed" not in line and "balanced" not in line)
    o = get("codex").outcome(cut, None)
    assert o.kind == "crashed" and "was stopped" in o.summary


def test_reset_time_rolls_over_midnight_and_reads_dates() -> None:
    now = dt.datetime(2026, 11, 29, 22, 0).timestamp()
    morning = reset_time("You’ve hit your usage limit. … try again at 9:43 AM.", now)
    assert dt.datetime.fromtimestamp(morning or 0) == dt.datetime(2026, 11, 30, 9, 43)
    evening = reset_time("try again at 11:05 PM.", now)
    assert dt.datetime.fromtimestamp(evening or 0) == dt.datetime(2026, 11, 29, 23, 5)
    dated = reset_time("try again at Dec 3rd, 2026 9:43 AM.", now)
    assert dt.datetime.fromtimestamp(dated or 0) == dt.datetime(2026, 12, 3, 9, 43)
    assert reset_time("You’ve hit your usage limit.", now) is None


def test_codex_command_line() -> None:
    run = build("codex", model="gpt-5.5", budget_usd=2.0)
    assert run.argv[:7] == ["codex", "exec", "--json", "-C", "/w/tree", "--sandbox", "workspace-write"]
    assert run.argv[run.argv.index("-m") + 1] == "gpt-5.5"
    assert run.argv[-1] == "Add a GET /orders endpoint."
    assert run.argv[run.argv.index("-c") + 1] == 'developer_instructions="Stay on your branch."'
    assert run.meter == {"format": "codex", "budget_usd": 2.0, "prices": meter_prices("gpt-5.5")}
    assert "read-only" in build("codex", edit_without_asking=False).argv



def test_codex_is_started_at_its_level() -> None:
    def sandbox(**kw: object) -> str:
        argv = build("codex", **kw).argv
        return argv[argv.index("--sandbox") + 1]

    assert [sandbox(level=lv) for lv in ("read-only", "ask", "edits", "free", None)] == \
        ["read-only", "workspace-write", "workspace-write", "workspace-write", "workspace-write"]
    assert {sandbox(level=lv, edit_without_asking=False) for lv in ("ask", "edits", "free", None)} == {"read-only"}, \
        "a worker that may not edit unasked makes no edit: nothing would ask for it"
    assert not any("approval" in a for a in build("codex", level="edits").argv), \
        "exec has no approval policy that refuses an unasked command: its hook asks"

def test_codex_names_the_minute_of_a_reset_later_this_minute() -> None:
    # "try again at 7:40 AM" said at 7:40:39 means this very minute (the time is cut, not rounded), not
    # tomorrow; said at 7:42 it means tomorrow.
    now = datetime.now().astimezone().replace(hour=7, minute=40, second=39, microsecond=0)
    this_minute = reset_time("You’ve hit your usage limit. … try again at 7:40 AM.", now.timestamp())
    assert this_minute == now.replace(second=0).timestamp()
    later = now.replace(minute=42)
    tomorrow = reset_time("try again at 7:40 AM.", later.timestamp())
    assert tomorrow == (now.replace(second=0) + timedelta(days=1)).timestamp()


def test_codex_takes_the_exact_reset_from_its_windows() -> None:
    # The meter's line carries the windows Codex wrote to its session file; the refusal's reset is the
    # second of the full one, named the way Claude names its windows.
    reset = 1_800_000_000
    log = "\n".join(json.dumps(e) for e in [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "error", "message": "You’ve hit your usage limit. … try again at 9:33 AM."},
        {"type": "turn.failed", "error": {"message": "You’ve hit your usage limit. … try again at 9:33 AM."}},
        {"type": "balanced.meter", "cost_usd": 0.0, "budget_usd": None, "over_budget": False, "tokens": {},
         "windows": [{"type": "primary", "used_percent": 100.0, "window_minutes": 300, "resets_at": reset},
                     {"type": "secondary", "used_percent": 40.0, "window_minutes": 10080,
                      "resets_at": reset + 86400}]}])
    out = CodexAdapter().outcome(log, 1)
    assert out.kind == "usage_limit" and out.reset_at == reset
    assert [(w["type"], w["used_percent"]) for w in out.windows] == [("five_hour", 100.0), ("seven_day", 40.0)]
