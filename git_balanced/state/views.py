"""Light views of folded jobs and plans, for readers of thousands at once (the board).

`jobs.Job` and `jobs.StoredPlan` are the typed API; they validate every field, which for 10,000 jobs
costs more than the whole board should, and importing pydantic alone costs more than starting Python.
These views read only the fields the board shows, with the same defaults (tests hold them to `Job`'s),
and without validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from git_balanced.vocab import JobState


class JobView:
    """One job's fields as the board reads them, from its folded state (`state/fold.py`): what the job's events
    set, over these defaults (those of `Job`)."""

    id: str = ""
    state: str = JobState.QUEUED
    created: float = 0.0
    updated: float = 0.0
    plan: str = ""
    piece: str = ""
    task: str = ""
    title: str = ""
    agent: str = "shell"
    model: str | None = None
    machine: str = "local"
    branch: str = ""
    base: str | None = None
    attempt: int = 1
    lead: str = ""
    cost_usd: float | None = None
    budget_usd: float | None = None
    spent_before: float = 0.0
    budget_stopped: bool = False
    landed: str | None = None
    landed_in: str = ""
    reset_at: float | None = None
    resume_at: float | None = None
    moved_to: str | None = None
    reason: str = ""
    failure: str = ""
    final: str = ""
    asked: str | None = None
    answered_by: str | None = None
    started_at: float | None = None
    in_the_way: tuple[str, ...] = ()
    in_the_way_why: str = ""
    waits_for: str = ""
    retry_reason: str = ""
    dismissed: bool = False
    node: str = ""  # the clone whose engine claimed the job

    def __init__(self, name: str, folded: Mapping[str, Any]) -> None:
        fields = folded["fields"]
        own = vars(self)
        keys = fields.keys() & _READ
        own.update(zip(keys, map(fields.__getitem__, keys), strict=True))
        for k in _FLOATS & own.keys():
            if type(own[k]) is int:  # as pydantic reads a `float` field: an int from JSON becomes a float
                own[k] = float(own[k])
        if "in_the_way" in own:
            own["in_the_way"] = tuple(own["in_the_way"])
        self.id = name
        self.state = folded["state"] or JobState.QUEUED
        self.created = float(folded["created"] or 0.0)
        self.updated = float(folded["updated"] or 0.0)


FIELDS = tuple(JobView.__annotations__)
_READ = frozenset(FIELDS) - {"id", "state", "created", "updated"}  # those four are the fold's, not the events'
_FLOATS = frozenset(("cost_usd", "budget_usd", "spent_before", "reset_at", "resume_at", "started_at"))


class PieceView:
    """A stored plan's piece as the board reads it."""

    __slots__ = ("id", "after", "after_words", "placed")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.id: str = fields["id"]
        self.after: tuple[str, ...] = tuple(fields.get("after", ()))
        self.after_words: str = fields.get("after_words", "")
        self.placed: str = fields["placed"]


class PlanView:
    """One plan's fields as the board reads them; its pieces only when asked for (a plan that is done has
    nothing for the board's Next)."""

    __slots__ = ("id", "state", "task", "lead", "budget_usd", "_fields")

    def __init__(self, name: str, folded: Mapping[str, Any]) -> None:
        self._fields = folded["fields"]
        self.id: str = name
        self.state: str = folded["state"] or "created"
        self.task: str = self._fields.get("task", "")
        self.lead: str = self._fields.get("lead", "")
        budget = self._fields.get("budget_usd")
        self.budget_usd: float | None = None if budget is None else float(budget)

    @property
    def pieces(self) -> tuple[PieceView, ...]:
        return tuple(PieceView(p) for p in self._fields.get("pieces", ()))


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
