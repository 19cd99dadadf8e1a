"""The narrator knows a check of its own process from the process itself: it says it starts and ends, its end
before anything after it, without reading /proc; others' checks it still finds in /proc."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from git_balanced import proc, process
from git_balanced.engine import narrate
from git_balanced.engine.narrate import Narrator
from git_balanced.git import Repo
from git_balanced.landing.checks import Ours, marks_of
from tests.support.builders import make_repo


def test_a_check_of_this_process_is_said_without_a_walk_of_proc(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    out = io.StringIO()
    told = Narrator(repo, out=out, status=io.StringIO())
    walks: list[str] = []
    walk = proc.marked
    monkeypatch.setattr(narrate.proc, "marked", lambda prefix: walks.append(prefix) or walk(prefix))
    told.look(repo)
    assert len(walks) == 1, "none runs: /proc is looked at once"
    told.look(repo)
    assert len(walks) == 1, f"and not again within {narrate.IDLE_CHECKS_EVERY} s"
    ours = process.part(Ours)
    token = ours.begin()
    told.look(repo)
    assert out.getvalue().endswith("  checking (0 finished, waiting for their check)\n"), out.getvalue()
    told.look(repo)
    assert len(walks) == 1, "a check of this process is known without /proc"
    ours.end(token)
    told.look(repo)
    assert "  check ended after " in out.getvalue().splitlines()[-1]
    assert len(walks) == 2, "its end is looked past at once, for others' checks"


def test_a_check_of_another_process_is_still_found_in_proc(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    out = io.StringIO()
    told = Narrator(repo, out=out, status=io.StringIO())
    check = subprocess.Popen(["sleep", "30"], env={**os.environ, proc.MARK: marks_of(repo) + "land#1"})
    try:
        told.look(repo)
        assert out.getvalue().endswith("  checking (0 finished, waiting for their check)\n"), out.getvalue()
    finally:
        check.kill()
        check.wait()
    told._checks_looked = 0.0  # the next look looks again at once
    told.look(repo)
    assert "  check ended after " in out.getvalue().splitlines()[-1]
