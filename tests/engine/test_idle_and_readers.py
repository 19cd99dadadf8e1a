"""The engine's one idle hook (fold, then pack), the cache's writes and merged view, the narrator's in-process
reads, and the landing threads' own Repos."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from git_balanced.engine import upkeep
from git_balanced.engine.narrate import Narrator
from git_balanced.git import Repo
from git_balanced.landing.rounds import PerThread
from git_balanced.lead import Lead
from git_balanced.state import archive, cache, refs
from tests.state.test_archive import _plan
from tests.support.builders import make_repo


@pytest.fixture()
def lead(tmp_path: Path) -> Lead:
    return Lead(Repo.discover(make_repo(tmp_path / "lead")), "main")


def test_the_idle_hook_folds_then_goes_on_while_plans_are_left_then_rests(lead, monkeypatch, capsys) -> None:
    repo = lead.repo
    first, second = _plan(repo, 1, done=True), _plan(repo, 1, done=True)
    monkeypatch.setattr(archive, "DAY", 0.0)
    monkeypatch.setattr(archive, "IDLE_MOST", 1)
    hook = upkeep.Upkeep(lead)
    hook.idle(now=1000.0)
    assert hook.left and len(repo.list_refs("refs/balanced/archive/")) == 2, "one plan (and the inbox) folded"
    hook.idle(now=1001.0)  # well inside EVERY, but the fold left a plan: it goes on
    folded = repo.list_refs("refs/balanced/archive/")
    assert {f"refs/balanced/archive/{first[0]}", f"refs/balanced/archive/{second[0]}"} <= set(folded)
    assert not hook.left and (repo.state_dir / "gc-idle").exists(), "all folded: it rests"
    _plan(repo, 1, done=True)
    hook.idle(now=1002.0)
    assert len(repo.list_refs("refs/balanced/archive/")) == len(folded), "nothing before EVERY"
    assert capsys.readouterr().err.count("gc (engine idle): archived") == 2


def _written(repo: Repo) -> dict[str, tuple[int, int, int]]:
    """Each jobs cache part's journal and snapshot, as (inode, size, mtime): what changes when one is written."""
    d = repo.state_dir / "cache"
    return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in d.glob("jobs*.*")}


def _parts(before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]]) -> set[str]:
    """The parts (jobs, jobs.done, jobs.brief) a file of which was written between the two looks."""
    return {n.rsplit(".", 1)[0] for n in after if after[n] != before.get(n)}


def test_a_running_jobs_event_writes_the_live_journal_only_and_the_merged_view_is_kept(lead) -> None:
    repo = lead.repo
    _plan(repo, 1, done=True)
    _, (running,) = _plan(repo, 1, done=False)
    cache.read_all(repo, "jobs")
    merged = cache._cached(cache._path(repo, "jobs"), "jobs")
    assert cache._cached(cache._path(repo, "jobs"), "jobs") is merged, "not merged again while nothing changed"
    before = _written(repo)
    refs.append(repo, refs.ref_for("jobs", running), "noted", "p0: a note", {"note": "n"})
    assert cache.read_all(repo, "jobs")[running]["state"] == "running"
    after = _written(repo)
    assert _parts(before, after) == {"jobs"}, (before, after)
    assert cache._cached(cache._path(repo, "jobs"), "jobs") is not merged, "a change is seen"
    refs.append(repo, refs.ref_for("jobs", running), "landed", "p0: landed", {"landed": "0" * 40}, state="landed")
    assert cache.read_all(repo, "jobs")[running]["state"] == "landed"
    assert _parts(after, _written(repo)) == {"jobs", "jobs.done", "jobs.brief"}, "out of the live, into the settled"
    assert cache.read_live(repo, "jobs")[running]["brief"], "read back from the brief"


def test_the_narrator_says_the_events_a_tip_moved_by_read_in_process(lead) -> None:
    repo = lead.repo
    _, (job,) = _plan(repo, 1, done=False)
    out = io.StringIO()
    told = Narrator(repo, out=out, status=io.StringIO())
    chain = refs.ref_for("jobs", job)
    refs.append(repo, chain, "noted", "p0: first of two", {})
    refs.append(repo, chain, "finished", "p0: finished with 1 commit", {}, state="finished")
    told._checks_looked = float("inf")  # no look for running checks: only what the refs say
    told.look(repo)
    said = [line.split("  ", 1)[1] for line in out.getvalue().splitlines()]
    assert said == ["p0: first of two", "p0: finished with 1 commit"], said
    assert told.states[job] == "finished"
    told.look(repo)
    assert len(out.getvalue().splitlines()) == 2, "nothing new, nothing said"


def test_each_landing_thread_gets_its_own_repo(lead) -> None:
    own = PerThread(lead.repo)
    assert own.get() is lead.repo, "the thread that made it keeps the Repo it gave"
    got: list[Repo] = []
    threads = [threading.Thread(target=lambda: got.extend([own.get(), own.get()])) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] is got[1] and got[2] is got[3], "one a thread, kept"
    assert len({id(got[0]), id(got[2]), id(lead.repo)}) == 3, "never shared"
    assert got[0].common_dir == lead.repo.common_dir and os.path.samefile(got[2].root, lead.repo.root)
    assert got[0].cleared is lead.repo.cleared, "the stale locks a thread removes are told with the others"


def test_a_follower_reads_its_one_job_through_the_cache(lead) -> None:
    from git_balanced import jobs

    repo = lead.repo
    _, (job,) = _plan(repo, 1, done=False)
    jobs.all_jobs(repo)  # the follower's first resolve of the name, through every job
    first = jobs.again(repo, job)
    assert first is not None and first.state == "running"
    assert jobs.again(repo, job) is first, "its tip did not move: the cached fold, not a new one"
    refs.append(repo, refs.ref_for("jobs", job), "finished", "p0: finished", {}, state="finished")
    assert jobs.again(repo, job).state == "finished"
    assert repo.delete_ref(refs.ref_for("jobs", job), None)
    assert jobs.again(repo, job) is None, "gone: the follower says so and stops"


def test_the_narrator_says_each_event_of_quick_writes_and_lists_nothing_while_the_refs_rest(lead) -> None:
    repo = lead.repo
    _, (job,) = _plan(repo, 1, done=False)
    out = io.StringIO()
    told = Narrator(repo, out=out, status=io.StringIO())
    told._checks_looked = float("inf")
    chain = refs.ref_for("jobs", job)
    for k in range(5):  # writes in quick succession, each looked at at once: none is missed
        before = repo.refs_stamp("refs/balanced/jobs/")
        repo.list_refs("refs/balanced/jobs/")
        assert repo.refs_stamp("refs/balanced/jobs/") == before, "a listing changes nothing"
        refs.append(repo, chain, "noted", f"p0: note {k}", {})  # within the clock's tick, the stamp may stay
        told.look(repo)
    assert [line.split("  ", 1)[1] for line in out.getvalue().splitlines()] == [f"p0: note {k}" for k in range(5)]
    told.tips = {}  # were the jobs listed again, every job would be said as new
    os.utime(repo.common_dir / "refs" / "balanced" / "jobs", ns=(1, 1))  # long settled
    told._stamp = repo.refs_stamp("refs/balanced/jobs/")
    told.look(repo)
    assert len(out.getvalue().splitlines()) == 5, "a settled stamp: the jobs are not listed again"
