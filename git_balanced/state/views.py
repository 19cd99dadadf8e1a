"""Light views of folded jobs and plans, for readers of thousands at once (the board).

`jobs.Job` and `jobs.StoredPlan` are the typed API; they validate every field, which for 10,000 jobs
costs more than the whole board should, and importing pydantic alone costs more than starting Python.
These views read only the fields the board shows, with the same defaults (tests hold them to `Job`'s),
and without validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar


def _num(value: Any) -> Any:
    """A number as a `float | None` field holds it: an int read from JSON becomes a float, as pydantic does."""
    return float(value) if type(value) is int else value


class JobView:
    """One job's fields as the board reads them, from its folded state (`state/fold.py`)."""

    __slots__ = ("id", "state", "created", "updated", "plan", "piece", "task", "title", "agent", "model",
                 "machine", "branch", "base", "attempt", "lead", "cost_usd", "budget_usd", "budget_stopped",
                 "landed", "landed_in", "reset_at", "resume_at", "moved_to", "reason", "failure", "final",
                 "asked", "answered_by", "started_at", "in_the_way", "in_the_way_why", "waits_for",
                 "retry_reason", "dismissed")

    def __init__(self, name: str, folded: Mapping[str, Any]) -> None:
        g = folded["fields"].get
        self.id: str = name
        self.state: str = folded["state"] or "queued"
        self.created: float = _num(folded["created"] or 0.0)
        self.updated: float = _num(folded["updated"] or 0.0)
        self.plan: str = g("plan", "")
        self.piece: str = g("piece", "")
        self.task: str = g("task", "")
        self.title: str = g("title", "")
        self.agent: str = g("agent", "shell")
        self.model: str | None = g("model")
        self.machine: str = g("machine", "local")
        self.branch: str = g("branch", "")
        self.base: str | None = g("base")
        self.attempt: int = g("attempt", 1)
        self.lead: str = g("lead", "")
        self.cost_usd: float | None = _num(g("cost_usd"))
        self.budget_usd: float | None = _num(g("budget_usd"))
        self.budget_stopped: bool = g("budget_stopped", False)
        self.landed: str | None = g("landed")
        self.landed_in: str = g("landed_in", "")
        self.reset_at: float | None = _num(g("reset_at"))
        self.resume_at: float | None = _num(g("resume_at"))
        self.moved_to: str | None = g("moved_to")
        self.reason: str = g("reason", "")
        self.failure: str = g("failure", "")
        self.final: str = g("final", "")
        self.asked: str | None = g("asked")
        self.answered_by: str | None = g("answered_by")
        self.started_at: float | None = _num(g("started_at"))
        self.in_the_way: tuple[str, ...] = tuple(g("in_the_way", ()))
        self.in_the_way_why: str = g("in_the_way_why", "")
        self.waits_for: str = g("waits_for", "")
        self.retry_reason: str = g("retry_reason", "")
        self.dismissed: bool = g("dismissed", False)


class PieceView:
    """A stored plan's piece as the board reads it."""

    __slots__ = ("id", "after", "after_words", "placed")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.id: str = fields["id"]
        self.after: tuple[str, ...] = tuple(fields.get("after", ()))
        self.after_words: str = fields.get("after_words", "")
        self.placed: str = fields["placed"]


class PlanView:
    """One plan's fields as the board reads them."""

    __slots__ = ("id", "state", "task", "lead", "pieces")

    def __init__(self, name: str, folded: Mapping[str, Any]) -> None:
        g = folded["fields"].get
        self.id: str = name
        self.state: str = folded["state"] or "created"
        self.task: str = g("task", "")
        self.lead: str = g("lead", "")
        self.pieces: tuple[PieceView, ...] = tuple(PieceView(p) for p in g("pieces", ()))


class Attempt(Protocol):
    """What `latest_by_piece` reads of a job: `Job` and `JobView` both have it."""

    @property
    def id(self) -> str: ...
    @property
    def plan(self) -> str: ...
    @property
    def piece(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def created(self) -> float: ...


A = TypeVar("A", bound=Attempt)


def latest_by_piece(jobs: Mapping[str, A]) -> dict[tuple[str, str], A]:
    """The newest attempt of each (plan, piece)."""
    out: dict[tuple[str, str], A] = {}
    for j in jobs.values():
        key = (j.plan, j.piece)
        cur = out.get(key)
        if cur is None or (j.attempt, j.created, j.id) > (cur.attempt, cur.created, cur.id):
            out[key] = j
    return out
