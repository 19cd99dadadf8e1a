"""The live board in a real terminal: tmux runs `board --live` 80 columns wide without colour (NO_COLOR), the
person reads the panes and the footer, and `q` quits."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import git_balanced
from tests.support.plans import lead_repo, piece, plan
from tests.support.wait import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _hues(styled: str) -> set[str]:
    """The colours in a screen's escape sequences that are not a shade of grey (256 colours or 24-bit)."""
    greys = {0, 7, 8, 15, 16, 231, *range(232, 256)}
    found = {f"5;{n}" for n in re.findall(r"\x1b\[(?:[0-9;]*;)?[34]8;5;(\d+)", styled) if int(n) not in greys}
    found |= {f"2;{r};{g};{b}" for r, g, b in re.findall(r"[34]8;2;(\d+);(\d+);(\d+)", styled) if not r == g == b}
    return found


def test_the_live_board_opens_in_a_terminal_and_quits_with_q(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("api", "true"), piece("web", "true", after=["api"])]).code == 0
    tmux = ["tmux", "-L", f"balanced-{os.getpid()}", "-f", "/dev/null"]
    top = str(Path(git_balanced.__file__).parents[1])
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": top, "TERM": "xterm-256color"}
    command = f"cd {repo} && {sys.executable} -m git_balanced.cli board --live"
    subprocess.run([*tmux, "new-session", "-d", "-x", "80", "-y", "24", "-s", "board", command], env=env,
                   check=True)

    def screen() -> str:
        cp = subprocess.run([*tmux, "capture-pane", "-p", "-t", "board"], capture_output=True, text=True)
        return cp.stdout if cp.returncode == 0 else ""

    try:
        shown = wait_until(lambda: (s := screen()) and "Next" in s and "Quit" in s and s, 30,
                           "the live board to draw", said=screen)
        assert "main · no engine runs; nothing waits" in shown, shown
        assert "api" in shown and "waits for `git balanced start`" in shown, shown
        assert all(len(line) <= 80 for line in shown.splitlines())
        styled = subprocess.run([*tmux, "capture-pane", "-p", "-e", "-t", "board"], capture_output=True,
                                text=True).stdout
        assert _hues(styled) == set(), "NO_COLOR: shades of grey, not one colour on the screen"
        subprocess.run([*tmux, "send-keys", "-t", "board", "q"], check=True)
        wait_until(lambda: subprocess.run([*tmux, "has-session", "-t", "board"], capture_output=True).returncode,
                   15, "q to quit the board", said=screen)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
