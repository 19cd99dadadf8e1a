"""The board's fast reads give the answers of the typed ones: `Job` made from a folded dict without its
`__init__` is the job its `__init__` makes, a plan's light view reads what `StoredPlan` does, and a chain read
whole through git is the walk in Python."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from git_balanced.engine import board
from git_balanced.git import Repo
from git_balanced.jobs import Job, StoredPiece, StoredPlan
from git_balanced.state import refs
from git_balanced.state.events import Event, write_event_commit
from git_balanced.state.fold import JOB_RANK
from git_balanced.state.views import PlanView
from tests.support.builders import make_repo


def folded(state: str | None, fields: dict[str, Any], created: float | None = 100.0,
           updated: float | None = 200.0) -> dict[str, Any]:
    return {"state": state, "fields": fields, "created": created, "updated": updated, "lamport": 3, "events": 3}


def shown(job: Job) -> str:
    """Every field of a job, as JSON would print it: 2 and 2.0 differ there."""
    return json.dumps(dataclasses.asdict(job), sort_keys=True, default=sorted)


FULL = {"plan": "p1", "piece": "api", "task": "Write the API\nin full", "title": "Write the API", "agent": "claude",
        "model": "sonnet", "machine": "alpha", "branch": "balanced/api", "base": "abc", "attempt": 2, "lead": "main",
        "cost_usd": 2, "budget_usd": 5, "budget_stopped": True, "landed": "def1234", "landed_in": "main",
        "reset_at": 1_700_000_000, "resume_at": 1_700_000_060.5, "moved_to": "codex", "reason": "it timed out.",
        "failure": "timeout", "final": "Tried twice.", "asked": "q1", "answered_by": "you", "started_at": 150,
        "in_the_way": ["a.txt", "b.txt"], "in_the_way_why": "a.txt is yours", "waits_for": "api-spec",
        "retry_reason": "flaky", "dismissed": False, "node": "n1", "paths": ["src/**"], "after": [],
        "tokens": {"input": 1}, "windows": [{"from": 1}], "plan_first": True, "from_a_newer_version": {"x": 1}}


def test_a_bare_job_has_the_defaults_its_init_gives() -> None:
    job = Job.of("j1", folded(None, {}, created=None, updated=None))
    assert shown(job) == shown(Job(id="j1")) and job == Job(id="j1")
    assert job.state == "queued" and job.extra == {} and job.tokens == {} and not job.set_


@pytest.mark.parametrize("fields", [{}, FULL, {**FULL, "asked": None, "in_the_way": [], "cost_usd": 0},
                                    {k: v for k, v in FULL.items() if k != "from_a_newer_version"}],
                         ids=["bare", "full", "no-question", "all-known"])
def test_a_job_made_from_its_fold_is_the_one_its_init_makes(fields: dict[str, Any]) -> None:
    job = Job.of("j1", folded("running", fields))
    again = dataclasses.replace(job)
    assert shown(job) == shown(again) and job == again
    assert all(type(getattr(job, k)) is float for k in ("cost_usd", "budget_usd", "reset_at", "started_at")
               if k in fields), "a whole number from JSON is a float where a float goes"
    assert all(type(getattr(job, k)) is tuple for k in ("paths", "after", "in_the_way", "windows") if k in fields)
    assert set(job.set_) == fields.keys() - {"from_a_newer_version"}
    assert job.as_fields() == {**{k: getattr(job, k) for k in job.set_}, **job.extra}


def test_old_names_read_as_todays() -> None:
    job = Job.of("j1", folded("queued", {"budget": 2}))
    assert job.budget_usd == 2.0 and job.extra == {}, "`budget` is `budget_usd` of an older version"
    assert Job.of("j1", folded("queued", {"budget": 2, "budget_usd": 3})).extra == {"budget": 2}
    piece = StoredPiece.of({"id": "a", "task": "t", "branch": "balanced/a", "placed": "local", "budget": 1,
                            "branch_note": "kept"})
    assert piece.budget_usd == 1.0 and piece.extra == {"branch_note": "kept"}


@pytest.mark.parametrize("state", sorted(JOB_RANK))
@pytest.mark.parametrize("fields", [{}, FULL, {**FULL, "asked": None, "in_the_way": [], "cost_usd": 0}],
                         ids=["bare", "full", "no-question"])
def test_the_board_shows_a_job_as_its_fields_say(monkeypatch: pytest.MonkeyPatch, state: str,
                                                 fields: dict[str, Any]) -> None:
    monkeypatch.setattr(board.time, "time", lambda: 1_700_000_100.0)  # a running job's clock, the same for both
    job = Job.of("j1", folded(state, fields))
    assert json.dumps(board.job_row(job)) == json.dumps(board.job_row(dataclasses.replace(job)))


def test_a_plan_view_reads_what_the_board_reads_of_a_stored_plan() -> None:
    pieces = [{"id": "api", "task": "t", "branch": "balanced/api", "placed": "local"},
              {"id": "ui", "task": "t", "branch": "balanced/ui", "placed": "alpha", "after": ["api"],
               "after_words": "after api", "size": 2.0}]
    for st in (folded(None, {}), folded("started", {"task": "Build it", "lead": "main", "pieces": pieces})):
        view, plan = PlanView("p1", st), StoredPlan.of("p1", st)
        assert (view.id, view.state, view.task, view.lead) == (plan.id, plan.state, plan.task, plan.lead)
        assert [(p.id, p.after, p.after_words, p.placed) for p in view.pieces] == \
            [(p.id, p.after, p.after_words, p.placed) for p in plan.pieces]


def test_a_chain_read_whole_through_git_is_the_chain_walked_in_python(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    ref = "refs/balanced/inbox/main"
    for i in range(5):
        refs.append(repo, ref, "info", f"message {i}", {"text": f"message {i} · ünïcödé ✓", "kind": "info"})
    base = refs.events_of(repo, ref)[2].sha
    side = write_event_commit(repo, Event(event="info", data={"text": "from another clone"}, lamport=3, node="n2",
                                          time=5.0), "from another clone", [base])
    merged = write_event_commit(repo, Event(event="merged", data={"remote": "origin"}), "Merge inbox",
                                [repo.read_ref(ref) or "", side])
    assert repo.cas_ref(ref, merged, repo.read_ref(ref))
    whole = refs.read_chain_whole(repo, merged)
    assert whole == refs.read_chain(repo, merged)
    assert len(whole) == 6 and {ev.event for ev in whole} == {"info"}, "the merge holds none"


def test_a_chain_git_cannot_walk_fails_as_the_walk_in_python_does(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    blob = repo.write_blob(b"not a commit")
    not_json = repo.write_commit(repo.write_tree([("event.json", 0o100644, blob)]), [], "not an event\n")
    ev = refs.append(repo, "refs/balanced/inbox/main", "info", "a message", {"text": "a message"})
    plain = repo.write_commit(repo.write_tree([]), [ev.sha], "a commit holding no event\n")
    for tip in (blob, "1" * 40, not_json, plain):
        with pytest.raises(Exception) as walked:
            refs.read_chain(repo, tip)
        with pytest.raises(Exception) as whole:
            refs.read_chain_whole(repo, tip)
        assert type(whole.value) is type(walked.value), tip
