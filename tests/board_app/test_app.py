"""The board's app driven by keys in Textual's headless harness, against a real repository whose plan, jobs and
questions are stored as the engine and the workers store them: four questions marked and allowed with one key,
a worker's pane, a stop, and the done workers folded and opened, the choice kept for the next run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from git_balanced import jobs as J
from git_balanced.board_app import prefs
from git_balanced.board_app.app import BoardApp
from git_balanced.board_app.screens import Worker
from git_balanced.channel import questions
from git_balanced.engine.control import stop_job
from git_balanced.lead import Lead, open_lead
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan

PIECES = ["a", "b", "c", "d", "e", "f", "api", "ui", "docs", "db"]


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    """A plan of ten pieces: six workers stopped, four queued, each of those asking to run a command, passed
    to you."""
    repo = lead_repo(tmp_path)
    ran = plan(repo, [piece(p, "true") for p in PIECES], "--json")
    assert ran.code == 0, ran.err
    plan_id = json.loads(ran.out)["plan"]
    lead = open_lead(str(repo))
    for p in PIECES:
        jid = J.place(lead.repo, {"plan": plan_id, "piece": p, "task": f"Do {p}.", "lead": "main",
                                  "machine": "local", "agent": "shell", "attempt": 1})
        if p in PIECES[:6]:
            stop_job(lead, jid)
        else:
            qid = questions.ask(lead.repo, jid, f"npm install {p}", kind="command")
            assert questions.pass_on(lead.repo, qid, "passed on by the lead")
    return lead


def _keys(app: BoardApp, pane: str) -> list[str]:
    table = app.query_one(f"#{pane}", DataTable)
    return [str(k.value) for k in table.rows]


def test_four_questions_are_marked_and_allowed_with_one_key(lead: Lead) -> None:
    stopped = sorted((j.id for j in J.all_jobs(lead.repo).values() if j.piece in PIECES[:6]),
                     key=lambda jid: J.all_jobs(lead.repo)[jid].updated)
    async def drive() -> None:
        app = BoardApp(lead, poll=60)
        async with app.run_test(size=(80, 24)) as pilot:
            assert _keys(app, "now")[:5] == ["n1", "n2", "n3", "n4", stopped[0]], "then the stopped workers"
            assert app.focused is app.query_one("#now", DataTable), "what waits on you has the keys first"
            await pilot.press("space", "space", "space", "space")
            assert app.query_one("#now-pane").border_subtitle == "4 marked · Enter: Allow 4"
            await pilot.press("enter")
            await pilot.pause()
            assert _keys(app, "now") == stopped, "answered: only the stopped workers are left under Now"
    asyncio.run(drive())
    asked = [q for q in questions.all_questions(lead.repo).values()]
    assert sorted(q["fields"]["decision"] for q in asked) == ["allow"] * 4
    assert all(q["fields"]["answered_by"] == "you" for q in asked)


def test_done_workers_fold_and_open_with_a_key_and_the_choice_is_kept(lead: Lead) -> None:
    async def drive(expect_folded: bool) -> list[str]:
        app = BoardApp(lead, poll=60)
        async with app.run_test(size=(80, 24)) as pilot:
            keys = _keys(app, "running")
            assert (keys[0] == "fold") is expect_folded
            if expect_folded:
                cells = app.query_one("#running", DataTable).get_row("fold")
                assert str(cells[2]) == "6 stopped"
                await pilot.press("f")
                assert len(_keys(app, "running")) == 10, "six stopped and four queued, each a row"
        return keys
    asyncio.run(drive(True))
    assert prefs.folded(lead) is False
    assert len(asyncio.run(drive(False))) == 10, "opened, as it was left"


def test_a_worker_opens_in_its_pane_and_is_stopped_with_a_key(lead: Lead) -> None:
    async def drive() -> None:
        app = BoardApp(lead, poll=60)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f", "tab")
            table = app.query_one("#running", DataTable)
            assert app.focused is table
            table.move_cursor(row=_keys(app, "running").index(next(r.key for r in app.rows["running"]
                                                                   if r.cells[2] == "api")))
            await pilot.press("l")
            assert isinstance(app.screen, Worker)
            about = app.screen.about
            assert "e7 api · queued" in about and "task: Do api." in about and "attempt 1" in about
            assert "asks: npm install api" in about
            await pilot.press("escape", "x")
            await pilot.pause()
    asyncio.run(drive())
    shown = balanced(lead.repo.root, "board", "--all").out
    assert "■ e7  api" in shown, shown
