"""A piece's options (`PieceOptions`) are written once: each goes from the plan file through the stored plan to
the job placed for the piece, and on to its next attempt, with no line of its own on the way."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from git_balanced import jobs as J
from git_balanced.engine import loop
from git_balanced.engine.context import Context
from git_balanced.git import Repo
from git_balanced.jobs import CARRIED, FILE_OPTIONS, OPTIONS, PieceOptions
from git_balanced.kit.tools import Piece as ToolPiece
from git_balanced.lead import Lead, settings_at
from git_balanced.plans.planfile import PIECE_KEYS
from tests.support.builders import git
from tests.support.plans import lead_repo, plan

# A value other than its default for each option a plan file sets: the core ones by hand (`run` goes with the
# shell agent only), any other by its type, so that a new option is followed with no line here.
CORE = {"agent": "claude", "model": "opus", "paths": ["src/**"]}
# `writes: none` goes without `paths`: it is followed on a piece of its own in tests/readonly/.
APART = {"writes": None}
BY_TYPE = {"bool": True, "str | None": "a value"}
SET = {**{f.name: BY_TYPE[str(f.type)] for f in fields(PieceOptions)
          if f.name in FILE_OPTIONS and f.name not in (*CORE, *APART, "run")}, **CORE}


def placed_data(repo: Path, job_id: str) -> dict[str, Any]:
    first = git(repo, "rev-list", "--max-parents=0", f"refs/balanced/jobs/{job_id}")
    return json.loads(git(repo, "show", f"{first}:event.json"))["data"]


def test_every_option_is_known_to_the_plan_file_the_plan_tool_and_a_new_attempt() -> None:
    assert set(FILE_OPTIONS) <= set(PIECE_KEYS), "the plan file reads each"
    assert set(FILE_OPTIONS) <= set(ToolPiece.model_fields), "the lead's plan tool offers each, with its words"
    assert all(ToolPiece.model_fields[o].description for o in FILE_OPTIONS)
    assert set(OPTIONS) <= set(CARRIED), "a next attempt carries each"
    assert set(OPTIONS) == {f.name for f in fields(PieceOptions)}


def test_every_option_flows_from_the_plan_file_to_the_placed_job(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [{"id": "api", "task": "Write the API.", **SET}], "--start", "--wait", budget=3.0).code == 0
    [stored] = J.all_plans(Repo.discover(repo)).values()
    [piece] = stored.pieces
    want = {**SET, **APART, "paths": tuple(SET["paths"]), "run": None, "budget_usd": 3.0}
    assert {o: getattr(piece, o) for o in OPTIONS} == want, "stored with the plan"
    eng = loop.Engine(Lead(Repo.discover(repo), "main"))  # its placing alone: no worker of a real agent starts
    assert eng._place(Context(eng.lead, settings_at(eng.repo, "main")), J.all_plans(eng.repo), {}) == (True, True)
    [job] = J.all_jobs(Repo.discover(repo)).values()
    assert {o: getattr(job, o) for o in OPTIONS} == want, "given to its job"
    placed = placed_data(repo, job.id)
    assert {o: placed.get(o) for o in OPTIONS} == {**want, "paths": SET["paths"]}, "as its placed event wrote them"
    assert {o: job.carried()[o] for o in OPTIONS} == want, "and carried to its next attempt"
