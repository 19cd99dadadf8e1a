"""The board as a live terminal app (`git balanced board --live`, `git balanced ui`): Now, Running and Next
from the same data as `board --json`, redrawn when the state refs move, answered with keys through the same
functions the commands call. Light on purpose: Textual is loaded only when the app runs."""

from __future__ import annotations

import sys

from git_balanced.errors import BalancedError
from git_balanced.lead import Lead


def run(lead: Lead) -> int:
    """Run the app on this terminal until the person quits; refused, saying what to run instead, without one."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise BalancedError("The live board needs a terminal, and this is not one.",
                            hint="run it in a terminal, or read the board as text: `git balanced board` "
                                 "(`--json` for data, `--watch` to redraw it).")
    from git_balanced.board_app.app import BoardApp

    BoardApp(lead).run()
    return 0
