"""The board's app driven by keys in Textual's headless harness, against a real repository whose plan and jobs
are stored as the engine stores them: a worker's pane, a stop, the timeline, and the done workers folded and
opened, the choice kept for the next run. (Questions asked through a running engine and answered with the app's
keys: test_engine_app.py.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from git_balanced import jobs as J
from git_balanced.board_app import prefs
from git_balanced.board_app.app import BoardApp
from git_balanced.board_app.screens import Timeline, Worker
from git_balanced.engine.control import stop_job
from git_balanced.lead import Lead, open_lead
from tests.board_app.toasts import notices_shown
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan

PIECES = ["a", "b", "c", "d", "e", "f", "api", "ui", "docs", "db"]


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    """A plan of ten pieces: six workers stopped, four queued."""
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
    return lead


def _keys(app: BoardApp, pane: str) -> list[str]:
    table = app.query_one(f"#{pane}", DataTable)
    return [str(k.value) for k in table.rows]


def test_a_person_opens_a_worker_stops_it_and_folds(lead: Lead) -> None:
    stopped = sorted((j for j in J.all_jobs(lead.repo).values() if j.piece in PIECES[:6]), key=lambda j: j.updated)

    async def drive() -> None:
        app = BoardApp(lead, poll=60)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            assert _keys(app, "now") == [j.id for j in stopped], "the stopped workers wait on you"
            assert app.focused is app.query_one("#now", DataTable), "what waits on you has the keys first"

            assert _keys(app, "running")[0] == "fold"
            assert str(app.query_one("#running", DataTable).get_row("fold")[3]) == "6 stopped  (f opens)"
            await pilot.press("f", "tab")
            table = app.query_one("#running", DataTable)
            assert app.focused is table and len(_keys(app, "running")) == 10, "six stopped and four queued"
            table.move_cursor(row=[r.cells[2] for r in app.rows["running"]].index("api"))
            await pilot.press("l")
            assert isinstance(app.screen, Worker)
            about = app.screen.about
            assert "e7 api · queued" in about and "task: Do api." in about and "attempt 1" in about, about
            await pilot.press("x")  # on its pane: the board behind it is redrawn, the pane stays
            await pilot.pause()
            assert isinstance(app.screen, Worker) and "Stopped api" in (await notices_shown(app, pilot))[-1]
            await pilot.press("escape")
            await pilot.press("v")
            assert isinstance(app.screen, Timeline)
            lanes = app.screen.text.plain.splitlines()
            assert lanes[1] == "local" and lanes[8].startswith("  e7 api") and lanes[8].endswith("■ stopped"), lanes

    asyncio.run(drive())
    shown = balanced(lead.repo.root, "board", "--all").out
    assert "■ e7  api" in shown, shown
    assert prefs.folded(lead) is False

    async def again() -> list[str]:
        app = BoardApp(lead, poll=60)
        async with app.run_test(size=(80, 24)):
            return _keys(app, "running")

    assert len(asyncio.run(again())) == 10, "opened, as it was left for this lead"
