"""Every adapter reads the event streams captured from the real CLIs (tests/fixtures/streams/, refreshed by
tests/e2e/test_agents_real.py) as the outcome each one must be, and the agents are known by name."""

from __future__ import annotations

import pytest

from git_balanced.agents import NAMES, get
from git_balanced.agents.base import KINDS
from git_balanced.errors import BalancedError
from tests.support.streams import STREAMS, read

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


def test_get_names_the_agents() -> None:
    assert set(NAMES) == {"claude", "codex", "pi", "shell"}
    assert [get(name).name for name in NAMES] == list(NAMES)
    with pytest.raises(BalancedError, match="unknown agent 'gemini'"):
        get("gemini")
