"""The foreground engine says what it does, one line per event as it is recorded, and when a check runs; the
board says when pieces wait and no engine runs, with the command that starts one."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

from git_balanced import proc
from git_balanced.engine.narrate import Narrator
from git_balanced.landing.checks import marks_of
from git_balanced.lead import open_lead
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan


def test_the_engine_says_each_event_and_the_board_says_when_none_runs(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("api", "echo api > src/api.txt && git add -A && git commit -qm api")], "--start").code == 0
    waiting = balanced(repo, "board")
    assert "No engine runs, so 1 piece waits: start one with `git balanced engine --detach`" in waiting.out, waiting
    assert json.loads(balanced(repo, "board", "--json").out)["engine"] == {
        "running": False, "pid": None, "waiting": 1, "start": "git balanced engine --detach"}
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    said = [line.split("  ", 1)[1] for line in ran.out.splitlines()]
    assert said[:3] == ["api: placed on local (attempt 1)", "api: started on local (attempt 1, shell)",
                        "api: finished with 1 commit"], ran.out
    assert said[-1].startswith("balanced/api: Its check passed, so balanced/api landed in main as "), ran.out
    assert not any("claimed" in s for s in said), "which engine took it is not news"
    assert "No engine runs" not in balanced(repo, "board").out, "nothing waits any more"


def test_a_running_check_is_said_with_its_time_and_the_status_line_counts(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    lead = open_lead(str(repo))
    out = io.StringIO()
    told = Narrator(lead.repo, out=out, status=io.StringIO())
    check = subprocess.Popen(["sleep", "30"], env={**os.environ, proc.MARK: marks_of(lead.repo) + "check#1"})
    try:
        told.look(lead.repo)
        assert out.getvalue().endswith("  checking (0 finished, waiting for their check)\n"), out.getvalue()
        assert told.counts().startswith("[engine] 0 queued · 0 running · 0 finished · 0 landed · 0 failed · "
                                        "checking 0:0"), told.counts()
    finally:
        check.kill()
        check.wait()
    told._checks_looked = 0.0  # the next look looks for checks again at once
    told.look(lead.repo)
    assert "  check ended after " in out.getvalue().splitlines()[-1]
