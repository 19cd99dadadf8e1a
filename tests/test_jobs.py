"""Jobs and plans read back from their event commits as typed models: the fields named and typed, what this
version does not know kept, and what a new attempt of a piece takes from the one before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_balanced import jobs as J
from git_balanced.engine import loop
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.job_events import Finished, Started, record
from git_balanced.jobs import CARRIED, Job, StoredPiece
from git_balanced.lead import Lead
from git_balanced.state import cache, refs
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import engine, lead_repo, piece, plan


def placed_data(repo: Path, job_id: str) -> dict[str, object]:
    """What the `placed` event of a job wrote, read from its commit with git."""
    first = git(repo, "rev-list", "--max-parents=0", f"refs/balanced/jobs/{job_id}")
    return json.loads(git(repo, "show", f"{first}:event.json"))["data"]


def test_a_job_folds_from_its_event_commits_into_typed_fields(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    jid = J.place(repo, {"plan": "p1", "piece": "api", "task": "Add the API.", "agent": "shell", "run": "true",
                         "paths": ["src/api/**"], "budget_usd": 2, "machine": "local", "branch": "balanced/api",
                         "attempt": 1, "lead": "main", "after": []})
    record(repo, jid, Started(pid=4242, worktree="/w/api", started_at=100.5, node=""), "api: started")
    record(repo, jid, Finished(ran={"exit_code": 0, "commits": 2, "cost_usd": 0, "dirty": False,
                                     "tokens": {"input": 10}, "windows": []}), "api: finished")
    job = J.all_jobs(repo)[jid]
    assert isinstance(job, Job) and job.state == "finished" and job.id == jid == job.job
    assert (job.piece, job.plan, job.agent, job.run, job.machine, job.branch) == \
        ("api", "p1", "shell", "true", "local", "balanced/api")
    assert job.paths == ("src/api/**",) and job.after == ()
    assert job.budget_usd == 2.0 and isinstance(job.budget_usd, float), "a whole number of dollars is a float"
    assert job.cost_usd == 0.0 and isinstance(job.cost_usd, float)
    assert (job.attempt, job.run_no, job.commits, job.pid) == (1, 1, 2, 4242)
    assert job.started_at == 100.5 and job.worktree == "/w/api" and job.tokens == {"input": 10}
    assert job.model is None and job.reason == "" and not job.decided, "what no event wrote has its default"
    assert job.created <= job.updated and job.updated > 0
    assert J.one(repo, jid) == job, "one job read alone is the same as read with all of them"
    assert job.extra == {}


def test_a_plan_folds_into_typed_pieces(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("alpha", "true", paths=["src/a/**"]),
                       piece("beta", "true", after=["alpha"], machine="local")], budget=1.0).code == 0
    [stored] = J.all_plans(Repo.discover(repo)).values()
    assert stored.state == "created" and stored.task == "A test plan" and stored.lead == "main"
    assert stored.budget_usd == 1.0 and stored.moves == {}
    alpha, beta = stored.pieces
    assert isinstance(alpha, StoredPiece) and alpha.paths == ("src/a/**",) and alpha.machine is None
    assert beta.after == ("alpha",) and beta.machine == "local" and beta.placed == "local"
    assert (alpha.branch, alpha.agent, alpha.run) == ("balanced/alpha", "shell", "true")
    assert stored.piece("beta") == beta and stored.piece("gamma") is None


def test_fields_this_version_does_not_know_are_kept(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    jid = J.place(repo, {"plan": "p1", "piece": "api", "task": "t", "lead": "main", "attempt": 1})
    refs.append(repo, refs.ref_for("jobs", jid), "noted", "api: newer fields",  # as a newer version writes them
                {"from_a_newer_version": {"weight": 3}, "priority": "high"})
    for _ in range(2):  # folded, then from the cache
        job = J.all_jobs(repo)[jid]
        assert job.extra == {"from_a_newer_version": {"weight": 3}, "priority": "high"}
    out = job.as_fields()
    assert out["from_a_newer_version"] == {"weight": 3} and out["priority"] == "high" and out["piece"] == "api"
    assert "state" not in out and "extra" not in out, "only what the events wrote"
    plan_id = "0plan0000000000"
    refs.append(repo, refs.ref_for("plans", plan_id), "created", "Plan: t",
                {"id": plan_id, "task": "t", "lead": "main", "pieces": [], "colour": "blue"}, state="created")
    assert J.one_plan(repo, plan_id) is not None and J.one_plan(repo, plan_id).extra == {"colour": "blue"}


def test_a_field_this_version_cannot_read_is_named_and_set_aside(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    good = J.place(repo, {"plan": "p1", "piece": "ui"})
    bad = J.place(repo, {"plan": "p1", "piece": "api", "tokens": "many"})  # a field the board never shows
    with pytest.raises(BalancedError) as err:
        J.one(repo, bad)
    assert bad in err.value.message and "field 'tokens' is str 'many'" in err.value.message, err.value.message
    assert err.value.hint and "doctor --fix" in err.value.hint
    assert set(J.all_jobs(repo)) == {good}, "every other job is read"
    said = capsys.readouterr().err
    assert said.count(f"refs/balanced/jobs/{bad} is malformed (its field 'tokens' is str 'many'") == 1, said
    assert repo.read_ref(f"refs/balanced/jobs/{bad}") is None, "set aside"
    assert repo.read_ref(f"refs/balanced/broken/jobs/{bad}"), "and kept"
    assert set(J.all_jobs(repo)) == {good} and capsys.readouterr().err == "", "named once"


def test_every_field_of_a_job_and_a_plan_is_checked_as_the_chain_folds(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    for key, value in (("exit_code", "0"), ("windows", {"a": 1}), ("plan_first", "yes"), ("lost_claims", [1])):
        jid = J.place(repo, {"plan": "p1", "piece": "api", key: value})
        with pytest.raises(BalancedError, match=f"field '{key}'"):
            J.one(repo, jid)
    plan_id = "0plan0000000001"
    piece = {"id": "a", "task": "t", "branch": "balanced/a", "placed": "local", "paths": "src/**"}
    refs.append(repo, refs.ref_for("plans", plan_id), "created", "Plan: t",
                {"id": plan_id, "task": "t", "lead": "main", "pieces": [piece]}, state="created")
    with pytest.raises(BalancedError, match="field 'pieces'"):
        J.one_plan(repo, plan_id)


def test_a_retry_through_the_engine_carries_the_listed_fields(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    marker = tmp_path / "first"
    run = f"if [ -f {marker} ]; then echo ok > src/ok.txt; else touch {marker}; exit 3; fi"
    assert plan(repo, [piece("flaky", run, paths=["src/**"])], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    first, second = sorted((j for j in J.all_jobs(Repo.discover(repo)).values() if j.piece == "flaky"),
                           key=lambda j: j.attempt)
    assert (first.state, second.state) == ("retried", "landed"), (first.state, second.state)
    assert first.failure and first.exit_code == 3, "the first attempt failed, and its job says how"
    assert set(placed_data(repo, first.id)) - {"job", "placed_at", "run_no"} == set(CARRIED), \
        "a piece's first job is placed with what a later one carries over"
    placed = placed_data(repo, second.id)
    took = set(placed) - {"job", "placed_at", "run_no", "previous", "retry_reason"}
    assert took == set(CARRIED), "what CARRIED lists, and nothing else of the first attempt"
    before = first.carried()
    for key in set(CARRIED) - {"attempt", "base"}:
        assert placed.get(key) == (list(before[key]) if isinstance(before.get(key), tuple) else before.get(key)), key
    assert placed["attempt"] == 2 and placed["previous"] == first.id
    assert placed["title"] == "Do flaky.", "the title comes along too"
    for key in ("exit_code", "failure", "reason", "worktree", "pid", "commits"):
        assert key not in placed, f"{key} belongs to the first attempt"


def test_a_pass_reads_the_jobs_again_only_after_a_phase_wrote(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("slow", "sleep 30; echo s > src/slow.txt")], "--start").code == 0
    reads: list[int] = []
    again: list[list[str]] = []
    real, real_written = J.all_jobs, cache.read_written

    def counted(r: Repo) -> dict[str, Job]:
        reads.append(1)
        return real(r)

    def written(r: Repo, kind: str, names: list[str]) -> dict[str, Any]:
        again.append(sorted(names))
        return real_written(r, kind, names)

    monkeypatch.setattr(J, "all_jobs", counted)
    monkeypatch.setattr(cache, "read_written", written)
    eng = loop.Engine(Lead(Repo.discover(repo), "main"))
    try:
        assert eng.pass_once()
        [job] = real(Repo.discover(repo))
        assert len(reads) == 1, "every job read once, at the start of the pass"
        assert again and all(names == [job] for names in again), "after the piece was placed and started, " \
            "that job alone is read again"
        reads.clear()
        again.clear()
        assert eng.pass_once()
        assert (len(reads), again) == (1, []), "its worker runs, nothing changed: one read for the whole pass"
    finally:  # its worker must not outlive the test
        for j in real(Repo.discover(repo)).values():
            assert balanced(repo, "stop", j.id).code == 0


def test_a_retry_after_a_conflict_keeps_the_pieces_paths(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    # Both start from the same tip and write src/x.txt: one lands, the other conflicts and goes again.
    assert plan(repo, [piece("one", "echo one > src/x.txt", paths=["src/**"]),
                       piece("two", "echo two > src/x.txt; echo two > src/y.txt", paths=["src/**"])],
                "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    jobs = J.all_jobs(Repo.discover(repo)).values()
    conflicted = [j for j in jobs if j.failure == "conflict"]
    assert conflicted, [(j.piece, j.state, j.failure) for j in jobs]
    again = next(j for j in jobs if j.previous == conflicted[0].id)
    assert again.paths == ("src/**",), "the piece's paths, not the files it conflicted in"
    assert again.state == "landed", (again.state, again.reason)


def test_a_job_id_copied_in_capitals_names_the_same_job(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    jid = J.place(Repo.discover(repo), {"plan": "p1", "piece": "api", "task": "t", "branch": "balanced/api"})
    jobs = J.all_jobs(Repo.discover(repo))
    assert J.by_prefix(jobs, jid.upper()).id == jid
    assert J.by_prefix(jobs, jid[:6].upper()).id == jid


def test_placing_what_the_fold_sets_is_refused(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    for key in ("state", "created", "id"):
        with pytest.raises(TypeError, match=f"a job has no field {key}"):
            J.place(repo, {"plan": "p1", "piece": "api", key: "landed"})
    assert J.all_jobs(repo) == {}, "nothing was stored"
