"""What the board app told the person, read as they see it: Textual's `notify` shows each notice as a Toast on the
screen (the app is run with `run_test(notifications=True)`, since a test run shows none by default)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.pilot import Pilot


async def notices_shown(app: App[Any], pilot: Pilot[Any]) -> list[str]:
    """The words of each notice on the app's screen now, newest last (after a pause, so the newest is shown)."""
    await pilot.pause()
    return [toast.render().plain for toast in app.screen.query("Toast")]
