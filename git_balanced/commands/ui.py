"""`git balanced ui`: the board as a live terminal app, as `board --live`."""

from __future__ import annotations

from git_balanced import board_app
from git_balanced.lead import open_lead


def ui_command() -> int:
    return board_app.run(open_lead())
