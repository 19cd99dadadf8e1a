"""`lead status` and `chief status` print a headless session's block through one helper (ui.session_lines):
what it was told, its session, turns, spend, what it waits on and what it said, with what only one of them has
between."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from git_balanced import ui
from git_balanced.channel import presence
from git_balanced.chief import session
from git_balanced.lead import open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced


def _record(task: str) -> dict:
    """A headless session's record whose driver runs (this process), five minutes after its last turn."""
    return {"agent": "claude", "task": task, "session": "5f0c1d2e", "pid": os.getpid(), "state": "waiting",
            "turns": 3, "last_turn_at": time.time() - 300, "cost_usd": 0.25, "waits_on": "news in its inbox",
            "last_words": "Planned two pieces."}


def _block(head: str, told: str, spent: str, *between: str) -> list[str]:
    """What status prints of _record's session under `head`: what it was `told` (its label padded, and the text),
    its spend, and the lines only one of the commands has."""
    return [head, f"  {told}", "  session   5f0c1d2e", "  turns     3, the last 5 min ago", f"  spent     {spent}",
            *between, "  waits on  news in its inbox", "  it said   Planned two pieces."]


def test_lead_status_prints_its_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    rec = _record("Add a health endpoint")
    (presence.lead_dir(open_lead(str(repo)).repo, "main") / "lead.json").write_text(json.dumps(rec))
    ran = balanced(repo, "lead", "status")
    assert ran.code == 0, ran.err
    assert ran.out.splitlines() == _block(f"Lead of main: Claude Code, waiting (pid {os.getpid()})",
                                          "task      Add a health endpoint", "$0.25, its workers $0.00")
    assert ran.out.splitlines()[1:] == ui.session_lines(rec, True, told="task", spent=", its workers $0.00")


def test_chief_status_prints_the_same_block(tmp_path: Path) -> None:
    rec = {**_record("Look over the projects."), "pass_after": 600}
    (session.folder() / session.RECORD).write_text(json.dumps(rec))
    ran = balanced(tmp_path, "chief", "status")
    assert ran.code == 0, ran.err
    passes = "  passes on what it leaves unanswered for 600 s"
    assert ran.out.splitlines() == _block(f"Chief: Claude Code, waiting (pid {os.getpid()})",
                                          "told      Look over the projects.", "$0.25", passes)
    assert ran.out.splitlines()[1:] == ui.session_lines(rec, True, told="told", between=[passes])
    rec["pid"] = None
    (session.folder() / session.RECORD).write_text(json.dumps(rec))
    ended = balanced(tmp_path, "chief", "status")
    assert "  waits on  news in its inbox" not in ended.out.splitlines(), "an ended session waits on nothing"
    assert ended.out.splitlines()[0] == "Chief: Claude Code, ended"
