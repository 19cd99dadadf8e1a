"""A paused worker is under Next with the time it goes on; a worker's row keeps what its lead allowed."""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.board_app.rows import next_rows, seats_words, worker_rows
from git_balanced.channel import questions
from git_balanced.commands.board import render
from git_balanced.git import Repo
from git_balanced.job_events import Paused, Started, record
from git_balanced.ui import clock
from tests.support.plans import board, lead_repo, piece, plan


def _placed(repo: Repo, plan_id: str, pid: str) -> str:
    return J.place(repo, {"plan": plan_id, "piece": pid, "task": f"Do {pid}.", "lead": "main", "machine": "local",
                          "agent": "shell", "attempt": 1, "branch": f"balanced/{pid}"})


def test_paused_under_next_and_allowed_kept_on_the_row(tmp_path: Path) -> None:
    path = lead_repo(tmp_path)
    assert plan(path, [piece("asks", "true"), piece("waits", "true")]).code == 0
    repo = Repo.discover(path)
    plan_id = next(iter(J.all_plans(repo)))
    asks, waits = _placed(repo, plan_id, "asks"), _placed(repo, plan_id, "waits")
    record(repo, asks, Started(pid=None, worktree="", started_at=time.time(), node=""), "asks: started")
    qid = questions.ask(repo, asks, "May I run npm install?", kind="command")
    questions.answer(repo, qid, None, "allow")
    resume = time.time() + 3600
    record(repo, waits, Paused(ran={}, reset_at=resume - 60, resume_at=resume, reset_known=True), "waits: paused")

    data = board(path)
    row = {r["piece"]: r for r in data["jobs"]}
    assert row["asks"]["reason"] == f"allowed by its lead ({qid}: May I run npm install?)", row["asks"]
    assert [n["job"] for n in data["next"] if n.get("job")] == [waits], "the paused worker is under Next"
    paused = next(n for n in data["next"] if n.get("job") == waits)
    assert paused["resume_at"] == resume and f"goes on at {clock(resume)}" in paused["words"]

    text = render(data)
    running, _, nxt = text.partition("\nNext\n")
    assert "waits" not in running and "allowed by its lead" in running, text
    assert f"‖ waits  paused for its plan's usage limit until {clock(resume - 60)}; goes on at {clock(resume)}  " \
        f"(e2, {waits})" in nxt, text
    assert [r.target for r in worker_rows(data, folded=False)] == [asks], "the app's Running has no paused row"
    opened = [r for r in next_rows(data) if r.kind == "worker"]
    assert [r.target for r in opened] == [waits], "the paused row under Next opens as a worker"
    assert seats_words(data) == "", "no check holds a seat"
    data["check_seats"]["local"]["in_use"] = 1
    assert seats_words(data).startswith("check seats: local 1/"), "the app's top line says it"
