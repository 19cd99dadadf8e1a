"""The tests of the board app (here and in tests/e2e) read it as a person sees it, through Textual's public API:
no `_private` name of an app, screen or pilot (its notices are the Toasts on the screen: toasts.py)."""

from __future__ import annotations

import re
from pathlib import Path

PRIVATE = re.compile(r"\b(?:app|screen|pilot)\._[a-z]\w*")


def test_no_board_app_test_reads_textuals_private_names() -> None:
    tests = Path(__file__).parents[1]
    found = [f"{path.relative_to(tests)}:{n}: {m.group()}" for path in sorted(tests.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) for m in PRIVATE.finditer(line)]
    assert found == [], "read it through Textual's public API instead (notices: toasts.notices_shown)"
