"""The board as it prints reads each plan wholly done as one summary (engine/folded.py, state/summary.py), kept in
`.git/balanced/cache/jobs.summary.json` while no job or plan ref changes: on a lead with plans archived, done
(landed, retried, dismissed, spent), done with a failure, and live (running, finished, queued), every board and
inbox prints what it prints with no plan summed up, to the byte; the kept file is what the board reads, and is
read past once a ref moves."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from git_balanced import jobs
from git_balanced.channel import inbox
from git_balanced.engine import folded
from git_balanced.engine.board import ROW_KEYS
from git_balanced.engine.shown import collect_shown
from git_balanced.git import Repo
from git_balanced.lead import open_lead
from git_balanced.state import cache, refs, summary
from git_balanced.vocab import JobState
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan
from tests.test_startup import both

READS = [["board"], ["board", "--json"], ["board", "--all"], ["board", "--all", "--json"], ["inbox"],
         ["inbox", "--json"]]


def _plan(repo: Path, task: str, names: list[str], *, start: bool = True) -> str:
    """A plan of shell pieces `names`, stored (and started): its id."""
    r = Repo.discover(repo)
    before = set(cache.read_all(r, "plans"))
    assert plan(repo, [piece(n, f"echo {n} > {n}.txt") for n in names], *(["--start"] if start else []),
                task=task).code == 0
    [pid] = set(cache.read_all(r, "plans")) - before
    return pid


def _job(r: Repo, pid: str, name: str, ends: list[str], attempt: int = 1, **more: object) -> str:
    """A job of piece `name`, written as the engine writes it, through the states `ends` (its last event's data
    `more`)."""
    tip = r.rev_parse("main") or ""
    jid = jobs.place(r, {"plan": pid, "plan_task": "t", "piece": name, "task": f"Do {name}.", "title": f"Do {name}.",
                         "agent": "shell", "run": "true", "machine": "local", "branch": f"balanced/{name}",
                         "base": tip, "attempt": attempt, "lead": "main"})
    chain = refs.ref_for("jobs", jid)
    data: dict[str, dict[str, object]] = {
        JobState.RUNNING: {"started_at": 1.0e9, "pid": 1},
        JobState.FINISHED: {"exit_code": 0, "head": tip, "commits": 1, "outcome": "done"},
        JobState.LANDED: {"landed": tip, "landed_in": "main"},
        JobState.FAILED: {"failure": "command-failed", "exit_code": 3, "reason": "the command exited 3"},
        JobState.RETRIED: {"reason": "the command exited 3"}}
    for i, state in enumerate(ends):
        extra = more if i == len(ends) - 1 else {}
        refs.append(r, chain, str(state), f"{name}: {state}", {**data[state], **extra}, state=state)
    if ends:
        inbox.post(r, "main", f"{name}: {ends[-1]}", kind="info", job=jid)
    return jid


def _done(r: Repo, pid: str) -> None:
    refs.append(r, refs.ref_for("plans", pid), "done", "Plan done", {"summary": "done"}, state="done")


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = lead_repo(tmp_path_factory.mktemp("board-summed"))
    r = Repo.discover(repo)
    old = _plan(repo, "Old", ["o1", "o2"])
    for n in ("o1", "o2"):
        _job(r, old, n, [JobState.RUNNING, JobState.FINISHED, JobState.LANDED])
    _done(r, old)
    assert balanced(repo, "gc", "--older-than", "0").code == 0  # archived: its refs gone
    done = _plan(repo, "All landed", [f"a{i}" for i in range(7)])
    for i in range(6):
        cost = {"cost_usd": 0.1 * i} if i % 2 else {}
        jid = _job(r, done, f"a{i}", [JobState.RUNNING, JobState.FINISHED, JobState.LANDED], **cost)
        if i == 3:
            refs.append(r, refs.ref_for("jobs", jid), "dismissed", "dismissed", {"dismissed": True})
    _job(r, done, "a6-with-a-long-name", [JobState.RUNNING, JobState.FAILED, JobState.RETRIED], cost_usd=0.7)
    _job(r, done, "a6-with-a-long-name", [JobState.RUNNING, JobState.FINISHED, JobState.LANDED], attempt=2)
    _done(r, done)
    broke = _plan(repo, "One failed", ["b0", "b1"])
    _job(r, broke, "b0", [JobState.RUNNING, JobState.FINISHED, JobState.LANDED])
    _job(r, broke, "b1", [JobState.RUNNING, JobState.FAILED])
    _done(r, broke)
    live = _plan(repo, "Live", ["a0", "c1", "c2", "c3", "c4"])
    _job(r, live, "a0", [JobState.RUNNING, JobState.FINISHED, JobState.LANDED], cost_usd=0.5)
    _job(r, live, "c1", [JobState.RUNNING], asked="q7k2m")  # its words say no clock
    _job(r, live, "c2", [JobState.RUNNING, JobState.FINISHED])
    _job(r, live, "c3", [])
    _plan(repo, "Waits", ["w1"], start=False)
    return repo


def _plain(repo: Repo, detail: bool = False) -> summary.Read:
    """The read with no plan summed up: every job one by one, as before summaries."""
    return summary.Read(cache.read_live(repo, "plans"), cache.read_live(repo, "jobs"), {}, {} if detail else None)


def _looks(lead: Path, monkeypatch: pytest.MonkeyPatch, n: list[int]) -> dict[str, str]:
    """Each read's words through the front door, each after a change (its kept answer not printed)."""
    out = {}
    for args in READS:
        n[0] += 1
        monkeypatch.setenv("GIT_BALANCED_TEST_LOOK", str(n[0]))
        ran = both(lead, args, None)[0]
        assert ran.code == 0, ran.err
        out[" ".join(args)] = ran.out
    return out


def test_every_read_is_as_with_nothing_summed(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = Repo.discover(lead)
    read = folded.read(r)
    by_task = {st["fields"]["task"]: pid for pid, st in read.plans.items()}
    assert sorted(read.summaries) == [by_task["All landed"]], "only the plan wholly done with no failure"
    s = read.summaries[by_task["All landed"]]
    assert s["rows"] == 7 and s["counts"] == {"landed": 6, "retried": 1} and s["width"] == len("a6-with-a-long-name")
    n = [0]
    summed = _looks(lead, monkeypatch, n)
    data = json.dumps(collect_shown(open_lead(lead)), default=str)  # the tools' board: its keys in their order too
    monkeypatch.setattr(folded, "read", _plain)
    plain = _looks(lead, monkeypatch, n)
    assert summed == plain
    assert data == json.dumps(collect_shown(open_lead(lead)), default=str)
    row = json.loads(data)["jobs"][0]
    assert tuple(k for k in row if k != "handle") == ROW_KEYS, "a kept row read in full has job_row's order"
    board = summed["board"]
    assert "  8 landed · 1 failed · 1 retried\n" in board, board
    assert "b1: the command exited 3  (e2:" in board, "a failure of a done plan waits on you, its handle qualified"
    assert "◐ e2 c1                   asked its lead" in board, "lined up with the longest piece summed up"


def test_the_kept_summary_is_read_until_a_ref_moves(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = Repo.discover(lead)
    settled = time.time() - 10
    for folder in summary.FOLDERS:  # as if nothing was written for ten seconds: the file is kept
        os.utime(r.common_dir / folder, (settled, settled))
    n = [100]
    first = _looks(lead, monkeypatch, n)["board"]
    kept = Path(os.path.dirname(cache.cache_path(r, "jobs"))) / "jobs.summary.json"
    held = json.loads(kept.read_text())
    [pid] = held["summaries"]
    held["summaries"][pid]["counts"]["landed"] = 41  # what the file says is what the board shows
    kept.write_text(json.dumps(held))
    assert "  43 landed · 1 failed · 1 retried\n" in _looks(lead, monkeypatch, n)["board"]
    states = cache.read_all(r, "jobs")
    live = next(j for j, st in states.items() if st["state"] == JobState.FINISHED)
    refs.append(r, refs.ref_for("jobs", live), "cost", "cost", {"cost_usd": 0.0})  # another plan's job moved:
    assert "  43 landed" in _looks(lead, monkeypatch, n)["board"], "the plan's summary is taken as it was kept"
    mine = next(j for j, st in states.items() if st["fields"]["plan"] == pid)
    refs.append(r, refs.ref_for("jobs", mine), "cost", "cost", {"cost_usd": 0.0})  # one of its own: summed again
    again = _looks(lead, monkeypatch, n)
    assert "  8 landed · 1 failed · 1 retried\n" in again["board"] and first.startswith(again["board"][:40])
    monkeypatch.setattr(folded, "read", _plain)
    assert _looks(lead, monkeypatch, n) == again
