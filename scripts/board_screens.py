"""Screenshots of the live board (SVG, Textual's own) from a repository with real state, for docs/board.md:
`python scripts/board_screens.py REPO docs/images`. The board, the done workers opened, a worker's pane, the
timeline and the keys."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual.widgets import DataTable

from git_balanced.board_app.app import BoardApp
from git_balanced.lead import open_lead


async def shoot(repo: str, out: Path) -> None:
    lead = open_lead(repo)
    app = BoardApp(lead, poll=60)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("space")
        await pilot.pause()
        app.save_screenshot("board.svg", str(out))
        await pilot.press("f", "tab")
        await pilot.pause()
        app.save_screenshot("board-open.svg", str(out))
        table = app.query_one("#running", DataTable)
        table.move_cursor(row=len(app.rows["running"]) - 1)
        await pilot.press("l")
        await pilot.pause()
        app.save_screenshot("worker.svg", str(out))
        await pilot.press("escape", "v")
        await pilot.pause()
        app.save_screenshot("timeline.svg", str(out))
        await pilot.press("escape", "f", "question_mark")
        await pilot.pause()
        app.save_screenshot("keys.svg", str(out))


if __name__ == "__main__":
    asyncio.run(shoot(sys.argv[1], Path(sys.argv[2])))
