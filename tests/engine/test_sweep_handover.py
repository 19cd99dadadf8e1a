"""The landed workers' cleanup an ending engine leaves to a process of its own, and what a killed sweeper leaves:
finished by the next engine or by `gc`, the branch kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.engine import sweep
from git_balanced.lead import open_lead
from git_balanced.machines.reach import workcopy
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import engine, jobs_of, lead_repo, piece, plan
from tests.support.wait import wait_until


def _landed_but_killed_while_sweeping(tmp_path: Path) -> tuple[Path, dict[str, object], Path]:
    """A piece landed by an engine that died half-way through its cleanup (its worktree removed, not its copy)."""
    repo = lead_repo(tmp_path)
    plan(repo, [piece("alpha", "echo a > src/alpha.txt")], "--start")
    r = engine(repo, "--until-idle", crash_at="sweep-midway")
    assert r.code == 137, r
    job = jobs_of(repo, "alpha")[0]
    assert job["state"] == "landed", job
    copy = workcopy.for_branch(open_lead(str(repo)).repo, str(job["branch"]))
    assert copy.is_dir(), "the sweeper died before the branch's copy went"
    assert sweep.Journal(open_lead(str(repo))).ids() == [job["id"]], "the job stays written down"
    return repo, job, copy


def _finished(repo: Path, job: dict[str, object], copy: Path) -> None:
    assert not copy.exists(), "the copy the killed sweeper left is removed"
    assert sweep.Journal(open_lead(str(repo))).ids() == [], "and the job crossed out"
    assert git(repo, "branch", "--list", str(job["branch"])).strip(), "the branch stays"


def test_the_next_engine_finishes_what_a_killed_sweeper_left(tmp_path: Path) -> None:
    repo, job, copy = _landed_but_killed_while_sweeping(tmp_path)
    assert engine(repo, "--until-idle").code == 0
    _finished(repo, job, copy)


def test_gc_finishes_what_a_killed_sweeper_left(tmp_path: Path) -> None:
    repo, job, copy = _landed_but_killed_while_sweeping(tmp_path)
    assert balanced(repo, "gc").code == 0
    _finished(repo, job, copy)


def test_an_entry_that_cannot_be_read_is_crossed_out(tmp_path: Path) -> None:
    journal = sweep.Journal(open_lead(str(lead_repo(tmp_path, check=None))))
    journal.dir.mkdir()
    (journal.dir / "1m94b9tmp2hbkm9").write_text('{"id": "1m94b9tmp2')  # as a killed engine may leave it
    (journal.dir / "1m94b9tmrqwg39h").write_text('{"id": "1m94b9tmp2hbkm9", "machine": "local", "runner_key": '
                                                  '"x", "branch": "b"}')  # another job's entry under its name
    assert journal.entries() == [] and journal.ids() == [], "neither is cleaned up after, nor kept"


def test_the_process_an_ending_engine_leaves_finishes_the_cleanup(tmp_path: Path) -> None:
    lead = open_lead(str(lead_repo(tmp_path, check=None)))
    job = sweep.Entry({"id": "1m94b9tmp2hbkm9", "machine": "local", "runner_key": "1m94b9tmp2hbkm9",
                       "branch": "balanced/alpha"})
    worktree = lead.repo.worktrees_home() / job.id  # half removed: a file left in a folder of it
    (worktree / "src").mkdir(parents=True)
    (worktree / "src" / "left.txt").write_text("left\n")
    copy = workcopy.for_branch(lead.repo, job.branch)
    copy.mkdir(parents=True)
    (copy / "HEAD").write_text("ref: refs/heads/balanced/alpha\n")
    journal = sweep.Journal(lead)
    journal.add([job])
    sweep.hand_over(lead)  # in its own session, as an ending engine starts it
    wait_until(lambda: not journal.ids(), 30, "the sweeper process to cross the job out")
    assert not worktree.exists() and not copy.exists(), "it removed what the job left"


def test_an_ending_engine_leaves_the_cleanup_to_a_process_of_its_own(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sweep.WAIT_ENV)
    repo = lead_repo(tmp_path)
    plan(repo, [piece("alpha", "echo a > src/alpha.txt")], "--start")
    assert engine(repo, "--until-idle").code == 0
    job = jobs_of(repo, "alpha")[0]
    assert job["state"] == "landed", job
    lead = open_lead(str(repo))
    copy = workcopy.for_branch(lead.repo, str(job["branch"]))
    wait_until(lambda: not copy.exists() and not sweep.Journal(lead).ids(), 30, "the handed-over cleanup ended")
    _finished(repo, job, copy)
    assert "Could not clean up" not in (lead.repo.state_dir / "engine.log").read_text(), "it cleaned up quietly"
