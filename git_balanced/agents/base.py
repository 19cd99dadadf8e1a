"""What an agent adapter gives the runner (an AgentRun) and reads back from the agent's log (an Outcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from git_balanced.shipped.messages import Reason

KINDS = Reason.OUTCOMES  # how an agent's run ended, as its adapter reads it from the log


@dataclass(frozen=True)
class AgentRun:
    argv: list[str]  # run in the worktree, stdin /dev/null, stdout+stderr to the log
    env: dict[str, str]  # extra environment
    files: dict[str, str]  # path relative to the run folder -> content, written before start;
    # argv may name them via "{run_dir}/..."
    meter: dict | None  # JSON-able budget meter spec for the stdlib runner (see meter.py), or None


@dataclass(frozen=True)
class Outcome:
    kind: str  # one of KINDS
    cost_usd: float | None
    reset_at: float | None  # epoch seconds, for usage_limit
    summary: str  # the agent's last words or the error text, short
    windows: list[dict] = field(default_factory=list)  # {"type", "used_percent", "resets_at"}
    tokens: dict = field(default_factory=dict)  # {"input": n, "output": n, ...} where known
    subagents: dict = field(default_factory=dict)  # {"ran": n, "failed": n, "unfinished": n} where known

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown outcome kind {self.kind!r}; one of {', '.join(KINDS)}")


class Adapter(Protocol):
    name: str

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None, level: str | None = None) -> AgentRun: ...

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome: ...


def short(text: str, limit: int = 400) -> str:
    """One paragraph of at most `limit` characters, for the inbox and the board."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tail(log_text: str, lines: int = 5) -> str:
    """The last non-empty lines of a log that is not an event stream (a crash before any event)."""
    kept = [line for line in log_text.splitlines() if line.strip()]
    return short(" / ".join(kept[-lines:])) if kept else "the agent printed nothing"


def crashed(log_text: str, exit_code: int | None, cost: float | None = None, tokens: dict | None = None
            ) -> Outcome:
    """The outcome of an agent that stopped without saying how its work ended."""
    how = "was stopped" if exit_code is None else f"exited {exit_code}"
    return Outcome(Reason.CRASHED, cost, None, short(f"the agent {how} without a final event: {tail(log_text)}"),
                   [], tokens or {})


def budget_words(meter: dict) -> str:
    """What the inbox says of a worker the meter stopped."""
    cost, budget = float(meter.get("cost_usd") or 0), float(meter.get("budget_usd") or 0)
    return f"stopped at ${cost:.2f}, its budget being ${budget:.2f}"
