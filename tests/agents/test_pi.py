"""Pi's adapter: its command line, and its JSON events read as an outcome."""

from __future__ import annotations

import pytest

from git_balanced.agents import get
from tests.support.streams import STREAMS, build, read


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


def test_pi_command_line() -> None:
    run = build("pi", model="anthropic/claude-sonnet-4-5", budget_usd=1.0, task="-v is a flag")
    assert run.argv[:4] == ["pi", "--mode", "json", "--no-session"]
    assert run.argv[run.argv.index("--provider") + 1] == "anthropic"
    assert run.argv[run.argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert run.argv[run.argv.index("--append-system-prompt") + 1] == "Stay on your branch."
    assert run.argv[-1] == " -v is a flag", "a task is never read as an option"
    assert run.meter == {"format": "pi", "budget_usd": 1.0}
    assert "--tools" in build("pi", edit_without_asking=False).argv



def test_pi_is_started_at_its_level() -> None:
    def tools(**kw: object) -> str | None:
        argv = build("pi", **kw).argv
        return argv[argv.index("--tools") + 1] if "--tools" in argv else None

    assert [tools(level=lv) for lv in ("read-only", "ask", "edits", "free", None)] == \
        ["read,grep,find,ls", None, None, None, None], "every tool but at read-only: its extension asks"
    assert tools(level="free", edit_without_asking=False) == "read,grep,find,ls"
