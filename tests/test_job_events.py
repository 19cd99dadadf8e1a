"""A job's events are typed: each field is named once, a misspelt one fails when the event is made, and what is
stored is what the readers have always folded."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.git import Repo
from git_balanced.job_events import Answered, Failed, Finished, Noted, Resuming, Retried, record
from git_balanced.state import refs
from git_balanced.vocab import Failure, JobState
from tests.support.builders import make_repo


def test_a_misspelt_field_fails_at_once() -> None:
    with pytest.raises(TypeError):
        Retried(nxt="j2")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Noted(wait_for="a machine")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field comits"):
        Finished(ran={"comits": 2})
    with pytest.raises(ValueError, match="failed, stopped or lost"):
        Failed(failure=Failure.CRASHED, reason="x", ended=JobState.RUNNING)


def test_what_is_stored_is_what_was_written_before() -> None:
    ev = Failed(failure=Failure.BUDGET, reason="spent", ended=JobState.STOPPED, ran={"commits": 0}, decided=True)
    assert (ev.event_name(), ev.event_state()) == ("budget", "stopped"), "named after how it failed, by default"
    assert ev.data() == {"commits": 0, "failure": "budget", "reason": "spent", "decided": True}
    assert Answered(answered="q1", answered_by="you").data() == {"answered": "q1", "answered_by": "you", "asked": None}
    assert Resuming(run_no=2, resume_note="go on", spent_before=1.0).data()["cost_usd"] is None, "the cost starts over"
    assert Noted(told_dirty=True).data() == {"told_dirty": True}, "a field not given is not stored"


def test_a_recorded_event_folds_into_the_job(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r", {"a.txt": "a\n"}))
    jid = J.place(repo, {"plan": "p1", "piece": "api", "task": "t", "branch": "balanced/api"})
    record(repo, jid, Retried(next="j2"), "api: tried again as j2")
    job = J.one(repo, jid)
    assert job is not None and job.state == JobState.RETRIED and job.next == "j2" and job.decided and not job.extra
    [ev] = [e for e in refs.events_of(repo, refs.ref_for("jobs", jid)) if e.event == "retried"]
    assert ev.state == "retried"


def test_a_job_is_placed_only_with_fields_it_has(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r", {"a.txt": "a\n"}))
    with pytest.raises(TypeError, match="no field machne"):
        J.place(repo, {"plan": "p1", "piece": "api", "machne": "local"})
    assert not repo.list_refs("refs/balanced/jobs/"), "nothing was stored"
