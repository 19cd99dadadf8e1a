"""`git balanced gc`: plans done long ago, with their jobs, folded into refs/balanced/archive/ and their refs
removed; never a job lost, whenever it is killed; `log`, `show` and the board read on."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from git_balanced import jobs, process
from git_balanced.channel import inbox
from git_balanced.git import Repo
from git_balanced.state import archive, notes, refs
from git_balanced.state.events import new_id
from tests.support.builders import git, make_repo
from tests.support.cli import balanced


def _plan(repo: Repo, pieces: int, *, done: bool) -> tuple[str, list[str]]:
    """A plan of `pieces` shell pieces, each landed (or, when not `done`, the last one running)."""
    pid = new_id()
    ref = refs.ref_for("plans", pid)
    stored = [{"id": f"p{i}", "task": f"piece {i}", "branch": f"balanced/{pid}-p{i}", "placed": "local",
               "agent": "shell", "run": "true"} for i in range(pieces)]
    refs.append(repo, ref, "created", "Plan", {"id": pid, "task": "t", "lead": "main", "pieces": stored},
                state="created")
    refs.append(repo, ref, "started", "Plan started", {"started_by": "lead"}, state="started")
    made = []
    for i, piece in enumerate(stored):
        jid = jobs.place(repo, {"plan": pid, "piece": piece["id"], "task": piece["task"], "agent": "shell",
                                "run": "true", "machine": "local", "branch": piece["branch"], "lead": "main"})
        chain = refs.ref_for("jobs", jid)
        refs.append(repo, chain, "started", f"{piece['id']}: started", {"started_at": time.time()}, state="running")
        if done or i < pieces - 1:
            tip = repo.rev_parse("main") or ""
            landed = repo.write_commit(repo.tree_of("main"), [tip], f"Merge {piece['branch']}\n")
            repo.cas_ref("refs/heads/main", landed, tip)
            refs.append(repo, chain, "landed", f"{piece['id']}: landed in main as {landed[:7]}",
                        {"landed": landed, "landed_in": "main"}, state="landed")
            notes.add_json(repo, notes.LANDINGS, landed, {"job": jid, "piece": piece["id"], "plan": pid})
            inbox.post(repo, "main", f"{piece['id']} landed", kind="landed", job=jid)
        made.append(jid)
    if done:
        refs.append(repo, ref, "done", "Plan done", {"summary": "landed"}, state="done")
    return pid, made


@pytest.fixture()
def history(tmp_path: Path) -> tuple[Repo, dict[str, tuple[str, list[str]]], float]:
    """A lead with a plan done long ago, one done now, one live; and a moment between the first and the others."""
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    old = _plan(repo, 2, done=True)
    between = time.time()
    new = _plan(repo, 1, done=True)
    live = _plan(repo, 2, done=False)
    return repo, {"old": old, "new": new, "live": live}, between


def _tips(repo: Repo) -> dict[str, str]:
    return {**repo.list_refs("refs/balanced/jobs/"), **repo.list_refs("refs/balanced/plans/")}


def test_gc_folds_the_old_done_plan_and_keeps_the_new_and_the_live(history) -> None:
    repo, plans, between = history
    before = _tips(repo)
    old_pid, old_jobs = plans["old"]
    chains = {j: [ev.sha for ev in refs.events_of(repo, refs.ref_for("jobs", j))] for j in old_jobs}
    done = archive.fold_away(repo, 0, now=between)
    assert done.plans == {old_pid: sorted(old_jobs)} and done.removed == 3, "the plan and its two jobs"
    after = _tips(repo)
    gone = {f"refs/balanced/jobs/{j}" for j in old_jobs} | {f"refs/balanced/plans/{old_pid}"}
    assert set(before) - set(after) == gone, "only the old plan's refs are removed"
    for j, shas in chains.items():
        lines = archive.archived_lines(repo, old_pid, j)
        assert lines is not None and [row["sha"] for row in lines] == shas, "every event archived, in order"
    subjects = git(repo.root, "log", "--format=%s", f"refs/balanced/archive/{old_pid}")
    assert subjects == f"Archived 2 jobs of plan {old_pid} and the plan", "git log reads the archive"
    again = archive.fold_away(repo, 0, now=between)
    assert again.plans == {} and again.removed == 0, "a second run finds nothing more"


def test_log_and_show_read_an_archived_job(history) -> None:
    repo, plans, between = history
    old_pid, old_jobs = plans["old"]
    shown_before = balanced(repo.root, "show", old_jobs[0], "--json")
    archive.fold_away(repo, 0, now=between)
    process.forget()
    logged = balanced(repo.root, "log", "--json")
    assert logged.code == 0 and {r["notes"][0]["job"] for r in json.loads(logged.out)} >= set(old_jobs)
    shown = balanced(repo.root, "show", old_jobs[0][:10], "--json")
    assert shown.code == 0, shown.err
    was, now = json.loads(shown_before.out), json.loads(shown.out)
    assert now.pop("archived") == f"refs/balanced/archive/{old_pid}"
    assert now.pop("branches_removed") == [], "its branch was never made here: nothing removed to bring back"
    assert was.pop("handle") and now.pop("handle") is None, "a handle lives as long as its plan's refs"
    assert now == was, "an archived job shows as it did"


def _steady(board: str) -> str:
    """`board` without its clock: a running job's time shown moves on between two reads a second apart."""
    return re.sub(r"running \d+:\d\d", "running M:SS", board)


def test_a_gc_killed_before_the_refs_go_loses_nothing_and_the_next_finishes(history, monkeypatch) -> None:
    repo, plans, between = history
    old_pid, old_jobs = plans["old"]
    before = _tips(repo)
    board = balanced(repo.root, "board", "--json").out

    def killed(*_: object) -> bool:
        raise KeyboardInterrupt  # as a kill between the archive and the refs' removal

    monkeypatch.setattr(Repo, "delete_refs", killed)
    with pytest.raises(KeyboardInterrupt):
        archive.fold_away(repo, 0, now=between)
    monkeypatch.undo()
    assert _tips(repo) == before, "no ref removed"
    assert repo.read_ref(f"refs/balanced/archive/{old_pid}"), "the archive was written"
    process.forget()
    assert _steady(balanced(repo.root, "board", "--json").out) == _steady(board), "readers read the refs as before"
    done = archive.fold_away(repo, 0, now=between)
    assert done.removed == 3
    log = git(repo.root, "log", "--format=%H", f"refs/balanced/archive/{old_pid}").splitlines()
    assert len(log) == 1, "the second run found its archive written and added no commit"


def test_a_job_that_moves_while_it_is_archived_stays(history, monkeypatch) -> None:
    repo, plans, between = history
    old_pid, old_jobs = plans["old"]
    real = archive._verified

    def moved_meanwhile(r: Repo, pid: str, wrote: dict[str, set[str]]) -> bool:
        refs.append(repo, refs.ref_for("jobs", old_jobs[0]), "noted", "a sync brought an event", {"x": 1})
        return real(r, pid, wrote)

    monkeypatch.setattr(archive, "_verified", moved_meanwhile)
    done = archive.fold_away(repo, 0, now=between)
    assert done.kept == [f"refs/balanced/jobs/{old_jobs[0]}"] and done.removed == 2
    assert repo.read_ref(refs.ref_for("jobs", old_jobs[0])), "the moved job keeps its ref"
    monkeypatch.undo()
    done = archive.fold_away(repo, 0, now=time.time())
    assert old_jobs[0] in done.plans[old_pid], "the next run archives it, its new event too"
    lines = archive.archived_lines(repo, old_pid, old_jobs[0]) or []
    assert lines[-1]["event"] == "noted"


def test_gc_on_the_command_line_archives_what_is_done_and_the_inbox_starts_after_it(history) -> None:
    repo, plans, _ = history
    live_pid, live_jobs = plans["live"]
    ran = balanced(repo.root, "gc", "--older-than", "0", "--json")
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    assert {p["plan"] for p in out["plans"]} == {plans["old"][0], plans["new"][0]} and out["jobs"] == 3
    assert set(repo.list_refs("refs/balanced/jobs/")) == {f"refs/balanced/jobs/{j}" for j in live_jobs}
    assert inbox.entries(repo, "main") == [], "every message was older than 0 days"
    inbox.post(repo, "main", "after the fold")
    assert [e["text"] for e in inbox.entries(repo, "main")] == ["after the fold"]
    said = balanced(repo.root, "gc", "--older-than", "-1")
    assert said.code == 1 and "--older-than -1" in said.err, said.err
    words = balanced(repo.root, "gc")
    assert words.code == 0 and "Nothing to archive: no plan was done more than 30 days ago." in words.out


def test_the_board_reads_done_jobs_as_briefs_and_prints_what_it_printed(history) -> None:
    import shutil

    from git_balanced.commands.board import FOLD_AFTER, render
    from git_balanced.engine.board import collect
    from git_balanced.lead import open_lead
    from git_balanced.state import cache

    repo, plans, _ = history
    _plan(repo, 4, done=True)
    live_pid, _ = plans["live"]
    failed = jobs.place(repo, {"plan": live_pid, "piece": "p9", "task": "piece 9", "agent": "shell", "run": "false",
                               "machine": "local", "branch": "balanced/p9", "lead": "main"})
    refs.append(repo, refs.ref_for("jobs", failed), "failed", "p9: failed", {"failure": "crashed",
                                                                             "reason": "it died"}, state="failed")
    shutil.rmtree(repo.state_dir / "cache", ignore_errors=True)  # every chain folded afresh
    process.forget()
    whole = balanced(repo.root, "board", "--all", "--json")
    assert whole.code == 0, whole.err
    process.forget()
    again = balanced(repo.root, "board", "--all", "--json").out
    assert _steady(again) == _steady(whole.out), "from the split cache, the same bytes"
    states = cache.read_live(repo, "jobs")
    assert {st["state"] for st in states.values() if st.get("brief")} >= {"landed", "failed"}
    assert not any(st.get("brief") for st in states.values() if st["state"] == "running"), "live ones in full"
    root = Path.cwd()
    try:
        import os

        os.chdir(repo.root)
        lead = open_lead()
        folded, whole_board = (re.sub(r"running \d+:\d\d", "running M:SS", render(data))
                               for data in (collect(lead, FOLD_AFTER), collect(lead)))
        assert folded == whole_board, "the folded board prints what it did"
    finally:
        os.chdir(root)
    printed = balanced(repo.root, "board").out
    assert "8 landed · 1 failed" in printed and "p9: it died" in printed, printed


def test_an_idle_engine_folds_a_few_plans_at_a_time_then_rests(history, monkeypatch, capsys) -> None:
    from git_balanced.lead import Lead

    repo, plans, _ = history
    monkeypatch.setattr(archive, "DAY", 0.0)  # whatever is done is older than `archive_after_days`
    monkeypatch.setattr(archive, "IDLE_MOST", 1)
    lead = Lead(repo, "main")
    archive.when_idle(lead)
    assert repo.read_ref(f"refs/balanced/archive/{plans['old'][0]}") and not (repo.state_dir / "gc-idle").exists()
    assert "gc (engine idle): archived 2 jobs of 1 plans" in capsys.readouterr().err, "said in engine.log"
    archive.when_idle(lead)
    assert repo.read_ref(f"refs/balanced/archive/{plans['new'][0]}"), "the next idle pass goes on"
    assert (repo.state_dir / "gc-idle").exists(), "all folded: it rests"
    _plan(repo, 1, done=True)
    archive.when_idle(lead)
    assert len(repo.list_refs("refs/balanced/archive/")) == 3, "not again before IDLE_EVERY (the two and the inbox)"


def test_the_inbox_is_folded_by_when_its_messages_were_said_not_by_their_commits_dates(tmp_path: Path) -> None:
    """A commit's date is what its writer's environment said (this suite's is in January): a message said now is
    never folded as old, whatever its commit says."""
    repo = Repo.discover(make_repo(tmp_path / "r"))
    inbox.post(repo, "main", "said just now")
    tip = repo.read_ref("refs/balanced/inbox/main")
    # The same message again, as git writes a commit here (a merge of two clones' inboxes is one): in January.
    again = git(repo.root, "commit-tree", "-p", tip, "-m", "said just now", f"{tip}^{{tree}}")
    assert git(repo.root, "log", "-1", "--format=%cd", "--date=short", again).startswith("2026-01")
    git(repo.root, "update-ref", "refs/balanced/inbox/main", again)
    archive.fold_away(repo, 30)
    assert archive.inbox_mark(repo, "refs/balanced/inbox/main") is None, "nothing of it is old"
    assert [e["text"] for e in inbox.entries(repo, "main")] == ["said just now", "said just now"]


def test_placement_counts_what_runs_from_the_live_jobs_as_from_every_job(tmp_path: Path) -> None:
    """seats' count of queued and running jobs per machine (live_counts, done jobs read as briefs) is the count
    every job folded gives (running_counts), before and after the cache holds the done ones as briefs."""
    from git_balanced.machines.placing.seats import live_counts, running_counts

    repo = Repo.discover(make_repo(tmp_path / "lead"))
    _plan(repo, 3, done=True)
    _plan(repo, 2, done=False)
    jobs.place(repo, {"plan": new_id(), "piece": "q", "task": "queued", "agent": "shell", "run": "true",
                      "machine": "box", "branch": "balanced/q", "lead": "main"})
    for _ in range(2):
        process.forget()
        want = running_counts(jobs.all_jobs(repo).values())
        assert want == {"local": 1, "box": 1}, want  # the one running, the one queued; the landed ones not
        assert live_counts(repo) == want
