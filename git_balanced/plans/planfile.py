"""Plans as models: the plan file read and checked (reader.py) as pydantic's `Plan` and `Piece`, the budget split
among them, and the waves pieces start in. Storing a plan takes draft.py's plain copy of them instead."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.dataclasses import dataclass as checked

from git_balanced.errors import SettingsError
from git_balanced.jobs import PieceOptions
from git_balanced.models import MachineName, PieceId
from git_balanced.plans import bounds
from git_balanced.plans.draft import budget_shares, describe_after
from git_balanced.plans.reader import PIECE_KEYS, _cycles, read_fields
from git_balanced.settings import AgentName

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


@checked(frozen=True, kw_only=True, config=ConfigDict(extra="forbid"))
class Piece(PieceOptions):
    """One piece of a plan: what to do, how big it is, what it waits for and where it may run; its options (how
    its worker runs) are `PieceOptions`', the one piece type the stored plan and its jobs have too."""

    id: PieceId
    task: Text
    size: Annotated[float, Field(ge=bounds.SIZE_RANGE[0], le=bounds.SIZE_RANGE[1], allow_inf_nan=False)] = 1.0
    after: tuple[PieceId, ...] = ()
    machine: MachineName | None = None
    # None: the settings' agent, filled in when the plan is stored.
    agent: AgentName | None = None  # type: ignore[assignment]
    model: Text | None = None
    run: Text | None = None
    # This piece's share of the plan's budget in USD: filled by with_shares, never read from the file.
    budget_usd: Annotated[float | None, Field(ge=0, le=bounds.BUDGET_MOST, allow_inf_nan=False)] = None

    @model_validator(mode="after")
    def _shell_runs(self) -> Piece:
        if (self.run is not None) != (self.agent == "shell"):
            raise ValueError("`run` goes with `agent: shell`, and only with it")
        return self


class Plan(BaseModel):
    """A task split into pieces: unique ids, `after` naming pieces of this plan, no circle of waiting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: Text
    budget: float | None = Field(default=None, ge=0, le=bounds.BUDGET_MOST, allow_inf_nan=False)
    pieces: tuple[Piece, ...] = Field(min_length=1, max_length=bounds.PIECES_MOST)

    @model_validator(mode="after")
    def _graph(self) -> Plan:
        ids = [p.id for p in self.pieces]
        edges: dict[str, list[str]] = {p.id: list(p.after) for p in self.pieces}
        wrong = [f"id {i} is used twice" for i in sorted(set(ids)) if ids.count(i) > 1]
        wrong += [f"{p} waits for {a}, which is no piece" for p in edges for a in edges[p] if a not in edges]
        wrong += [" → ".join(c) + " wait in a circle" for c in _cycles(edges)]
        if wrong:
            raise ValueError("; ".join(wrong))
        return self

    def piece(self, piece_id: str) -> Piece:
        """The piece with this id (KeyError when there is none)."""
        for piece in self.pieces:
            if piece.id == piece_id:
                return piece
        raise KeyError(piece_id)


def load_plan(text: str, source: str, *, known_machines: set[str] | None = None) -> Plan:
    """Read and check a plan file's text (reader.py: every problem found, each with `source`, the piece, the
    field and the line, in one SettingsError), as the plan's models."""
    return Plan.model_validate(read_fields(text, source, known_machines=known_machines))


def with_shares(plan: Plan, budget: float | None = None) -> Plan:
    """The plan with each piece's `budget_usd` filled by budget_shares (and the plan's budget the one used)."""
    shares = budget_shares(plan, budget)
    pieces = tuple(replace(p, budget_usd=shares[p.id]) for p in plan.pieces)
    used = plan.budget if budget is None else float(budget)
    return plan.model_copy(update={"pieces": pieces, "budget": used})


def order(plan: Plan) -> list[list[str]]:
    """The piece ids in waves: those waiting on nothing first, then each piece once all it waits for came."""
    placed: set[str] = set()
    waves: list[list[str]] = []
    left = list(plan.pieces)
    while left:
        wave: list[str] = [p.id for p in left if all(a in placed for a in p.after)]
        if not wave:
            raise SettingsError(f"pieces {', '.join(p.id for p in left)} wait for each other in a circle.",
                                hint="remove one `after` in the circle")
        waves.append(wave)
        placed.update(wave)
        left = [p for p in left if p.id not in placed]
    return waves


__all__ = ["PIECE_KEYS", "Piece", "Plan", "budget_shares", "describe_after", "load_plan", "order", "with_shares"]

