"""The event streams captured from the real agent CLIs, read by the adapters, and the command lines they build."""

from __future__ import annotations

from pathlib import Path

from git_balanced.agents import get
from git_balanced.agents.base import AgentRun, Outcome

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"


def read(cli: str, name: str, exit_code: int | None = 1) -> Outcome:
    """The outcome `cli`'s adapter reads from the capture `<cli>-<name>.jsonl`."""
    return get(cli).outcome((STREAMS / f"{cli}-{name}.jsonl").read_text(), exit_code)


def build(cli: str, **kw: object) -> AgentRun:
    """The command line `cli`'s adapter builds for a sample piece, with `kw` changed."""
    args = {"task": "Add a GET /orders endpoint.", "rules": "Stay on your branch.", "model": None,
            "budget_usd": None, "worktree": "/w/tree", "run_dir": "/w/run"}
    args.update(kw)
    return get(cli).build(**args)  # type: ignore[arg-type]
