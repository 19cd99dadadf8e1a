"""The budget meter the runner feeds an agent's output to: Pi's costs, Codex's tokens from its own
rollout, and the standard library alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.agents.prices import meter_prices
from git_balanced.shipped.meter import Meter
from tests.support.streams import STREAMS


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
