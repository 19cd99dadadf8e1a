"""The board's app over a running engine, driven by keys in Textual's headless harness: four shell workers each
ask their lead with `git balanced ask` (the path a worker's question takes), nobody answers within the lead's
`ask_timeout`, so the four come to you under Now while the app is open; a person opens one worker's live log,
tries to tell it a line (a shell worker cannot hear), marks the four with Space and allows them with Enter, and
each worker goes on with the app's answer and lands; the six done workers fold into one line, which `f`
opens."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, RichLog

from git_balanced.board_app import prefs
from git_balanced.board_app.app import BoardApp
from git_balanced.board_app.screens import Prompt, Worker
from git_balanced.channel import questions
from git_balanced.lead import open_lead
from tests.board_app.toasts import notices_shown
from tests.support.builders import git
from tests.support.plans import background_engine, board, lead_repo, piece, plan
from tests.support.wait import wait_until

PIECES = ["api", "ui", "docs", "db"]
QUIET = ["lint", "fmt"]  # two more that land at once, so that the six done workers fold


def _ask(p: str) -> str:
    return f"git balanced ask 'May I add the {p} package?' > src/{p}.txt"


async def _until(pilot: Pilot[int], what: Callable[[], object], timeout: float, words: str) -> None:
    """Let the app run (its polls read the engine's refs) until `what` holds."""
    for _ in range(int(timeout / 0.2)):
        if what():
            return
        await pilot.pause(0.2)
    raise AssertionError(f"timed out waiting for {words}")


def _keys(app: BoardApp, pane: str) -> list[str]:
    return [str(k.value) for k in app.query_one(f"#{pane}", DataTable).rows]


def test_four_questions_asked_through_a_running_engine_are_allowed_with_one_key(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra="ask_timeout = 1\n")
    pieces = [piece(p, _ask(p)) for p in PIECES] + [piece(p, f"echo ok > src/{p}.txt") for p in QUIET]
    assert plan(repo, pieces, "--start").code == 0
    lead = open_lead(str(repo))
    log = tmp_path / "engine.log"
    with background_engine(repo, log):
        async def drive() -> None:
            app = BoardApp(lead, poll=0.2)
            async with app.run_test(size=(80, 30), notifications=True) as pilot:
                await _until(pilot, lambda: len(_keys(app, "now")) == 4, 90, "four questions under Now")
                assert _keys(app, "now") == ["n1", "n2", "n3", "n4"]
                asked = {str(r.cells[1]).split(" asks")[0].split()[-1] for r in app.rows["now"]}
                assert asked == set(PIECES), [str(r.cells[1]) for r in app.rows["now"]]
                assert "engine running (pid" in str(app.query_one("#top").render())

                running = app.query_one("#running", DataTable)
                running.focus()  # the pane a person tabs to
                await pilot.pause()
                shown_pieces = [str(r.cells[2]) for r in app.rows["running"]]
                assert set(PIECES) <= set(shown_pieces), shown_pieces
                running.move_cursor(row=shown_pieces.index("api"))
                await pilot.press("l")
                assert isinstance(app.screen, Worker)
                assert "e1 api · running" in app.screen.about and "asks: May I add the api package?" in \
                    app.screen.about, app.screen.about
                shown = app.screen.query_one(RichLog)
                await _until(pilot, lambda: any("Asked the lead" in str(s.text) for s in shown.lines), 10,
                             "the worker's live log")
                await pilot.press("t")
                assert isinstance(app.screen, Prompt)
                app.screen.query_one(Input).value = "Use the v2 API."
                await pilot.press("enter")
                notices = await notices_shown(app, pilot)
                assert any("is a shell worker: it runs its command and reads nothing" in s for s in notices), notices
                await pilot.press("escape")
                app.query_one("#now", DataTable).focus()
                await pilot.pause()

                await pilot.press("space", "space", "space", "space")
                assert app.query_one("#now-pane").border_subtitle == "4 marked · Enter: Allow 4"
                await pilot.press("enter")
                notices = await notices_shown(app, pilot)
                assert notices[-1].startswith("Allowed 4: "), notices
                assert _keys(app, "now") == [], "answered, nothing waits on you"
                await _until(pilot, lambda: [r.key for r in app.rows["running"]] == ["fold"], 90,
                             "the six workers to land and fold")
                assert str(running.get_row("fold")[3]) == "6 landed  (f opens)"
                await pilot.press("f")
                assert sorted(str(r.cells[2]) for r in app.rows["running"]) == sorted([*PIECES, *QUIET])

        asyncio.run(drive())
        wait_until(lambda: all(j["state"] == "landed" for j in board(repo)["jobs"]), 30,  # type: ignore[index]
                   "the workers to land", said=log.read_text)
    for p in PIECES:
        assert git(repo, "show", f"main:src/{p}.txt") == "allowed", "each worker went on with the app's answer"
    assert prefs.folded(lead) is False, "opened, and kept so for this lead"
    asked = list(questions.all_questions(lead.repo).values())
    assert sorted(q["fields"]["decision"] for q in asked) == ["allow"] * 4
    assert {q["fields"]["answered_by"] for q in asked} == {"you"}
