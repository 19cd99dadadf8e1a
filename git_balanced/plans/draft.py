"""A plan as `plan FILE` stores it: read and checked by reader.py, then held in plain frozen dataclasses with the
fields, types and defaults of planfile.py's models (`Piece`, `Plan`), so storing a plan imports no pydantic.
What the reader let through is what the models would take (tests/plans/test_plan_draft.py holds the two alike).
Also what both kinds share: each piece's share of the budget, and what a piece waits for in words."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal
from fractions import Fraction
from typing import Any, Protocol

from git_balanced.errors import BalancedError
from git_balanced.jobs import PieceOptions
from git_balanced.models import MachineName, PieceId
from git_balanced.plans import bounds
from git_balanced.plans.reader import read_fields


@dataclass(frozen=True, kw_only=True)
class DraftPiece(PieceOptions):
    """One piece as planfile.Piece holds it (the same fields and defaults), checked by the reader."""

    id: str
    task: str
    size: float = 1.0
    after: tuple[str, ...] = ()
    machine: str | None = None
    agent: str | None = None  # type: ignore[assignment]  # None: the settings' agent, as in planfile.Piece
    model: str | None = None
    run: str | None = None
    budget_usd: float | None = None


@dataclass(frozen=True, kw_only=True)
class Draft:
    """A plan as planfile.Plan holds it: its task, its budget and its pieces."""

    task: str
    budget: float | None = None
    pieces: tuple[DraftPiece, ...]


def read_plan(text: str, source: str, *, known_machines: set[str] | None = None) -> Draft:
    """Read and check a plan file's text as planfile.load_plan does (the same SettingsError for each problem),
    as a Draft."""
    got = read_fields(text, source, known_machines=known_machines)
    return Draft(task=got["task"], budget=got.get("budget"), pieces=tuple(_piece(p) for p in got["pieces"]))


def _piece(got: dict[str, Any]) -> DraftPiece:
    """A piece's checked fields as the model's types make them: names of their kind, tuples for lists."""
    fields = dict(got)
    fields["id"] = PieceId.of(fields["id"])
    fields["after"] = tuple(PieceId.of(a) for a in fields.get("after", ()))
    fields["paths"] = tuple(fields.get("paths", ()))
    if fields.get("machine") is not None:
        fields["machine"] = MachineName.of(fields["machine"])
    return DraftPiece(**fields)


class _Sized(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def size(self) -> float: ...

    @property
    def after(self) -> Sequence[str]: ...


class _Budgeted(Protocol):
    @property
    def budget(self) -> float | None: ...

    @property
    def pieces(self) -> Sequence[_Sized]: ...


def budget_shares(plan: _Budgeted, budget: float | None = None) -> dict[str, float | None]:
    """Each piece's share of the budget (`budget`, the `--budget` flag, overrides the plan's) by size,
    in whole cents that sum exactly to the budget; None for every piece when there is no budget."""
    total = plan.budget if budget is None else budget
    if total is None:
        return {p.id: None for p in plan.pieces}
    if isinstance(total, bool) or not math.isfinite(total) or not 0 <= total <= bounds.BUDGET_MOST:
        raise BalancedError(f"--budget {total:g} is not {bounds.BUDGET_RULE}.",
                            hint="give --budget a number such as 2.50")
    cents = int((Decimal(str(total)) * 100).to_integral_value(ROUND_DOWN))  # never give out more than given
    weight = sum(Fraction(p.size) for p in plan.pieces)
    exact = [cents * Fraction(p.size) / weight for p in plan.pieces]
    given = [math.floor(x) for x in exact]
    # The cents left by rounding down go to the largest remainders, earlier pieces first on ties.
    for i in sorted(range(len(exact)), key=lambda i: (given[i] - exact[i], i))[: cents - sum(given)]:
        given[i] += 1
    return {p.id: c / 100 for p, c in zip(plan.pieces, given, strict=True)}


def draft_with_shares(plan: Draft, budget: float | None = None) -> Draft:
    """The draft with each piece's `budget_usd` filled by budget_shares (and the plan's budget the one used), as
    planfile.with_shares does for the models."""
    shares = budget_shares(plan, budget)
    pieces = tuple(replace(p, budget_usd=shares[p.id]) for p in plan.pieces)
    return replace(plan, pieces=pieces, budget=plan.budget if budget is None else float(budget))


def describe_after(piece: _Sized) -> str:
    """What a piece waits for, in words (`After: a, b and c (starts once landed)`); empty when nothing."""
    if not piece.after:
        return ""
    names = list(piece.after)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"After: {listed} (starts once landed)"
