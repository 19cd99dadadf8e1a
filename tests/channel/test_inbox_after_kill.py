"""An engine killed (as SIGKILL would) between landing and telling: every line the lead should hear is in the
inbox exactly once after the next engine's pass, and the board says landed, with the merge that landed it."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.builders import git
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan


@pytest.mark.parametrize("point", ["after-move", "after-told"])
def test_every_landing_is_told_once_after_a_kill(tmp_path: Path, point: str) -> None:
    repo = lead_repo(tmp_path)
    pieces = [piece("a", "echo a > src/a.txt"), piece("b", "echo b > src/b.txt")]
    assert plan(repo, pieces, "--start").code == 0

    r = engine(repo, "--until-idle", crash_at=point)
    assert r.code == 137, r  # it died where it was told to: the branch moved, the lead not (all) told
    moved = git(repo, "log", "--first-parent", "--format=%s", "main")
    assert "Land balanced/" in moved, moved
    for name in [n for n in ("a", "b") if f"Land balanced/{n} " in moved]:  # no engine runs now: the board says it
        [job] = jobs_of(repo, name)
        assert job["state"] == "landed" and job["reason"].startswith("landed in main as "), job
    r = engine(repo, "--until-idle")
    assert r.code == 0, r

    text = inbox_text(repo)
    merges = dict(line.split(" ", 1)[::-1] for line in git(repo, "log", "--first-parent", "--format=%h %s",
                                                                    "main").splitlines())
    for name in ("a", "b"):
        [job] = jobs_of(repo, name)
        assert job["state"] == "landed", job
        merge = merges[f"Land balanced/{name} ({name}, attempt 1)"]
        line = f"Its check passed, so balanced/{name} landed in main as {merge[:7]}"
        assert text.count(line) == 1, text
        assert text.count(f"balanced/{name} landed in main") == 1, text
        assert f"balanced/{name} is in main already" not in text, text
    assert text.count("is done: 2 landed") == 1, text


def test_a_real_sigkill_right_after_the_branch_moved(tmp_path: Path) -> None:
    """No crash point: git's own post-merge hook, which runs once the fast-forward moved main and the checkout,
    sends the engine a real SIGKILL (once)."""
    repo = lead_repo(tmp_path)
    hook = repo / ".git" / "hooks" / "post-merge"
    hook.parent.mkdir(exist_ok=True)
    done = tmp_path / "killed"
    hook.write_text(f"#!/bin/sh\n[ -e {done} ] && exit 0\ntouch {done}\n"
                    f"kill -9 $(head -n 1 {repo}/.git/balanced/engine.pid)\n")
    hook.chmod(0o755)
    assert plan(repo, [piece("a", "echo a > src/a.txt")], "--start").code == 0

    cp = subprocess.run([sys.executable, "-m", "git_balanced.cli", "engine", "--until-idle"], cwd=repo,
                        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert cp.returncode == -signal.SIGKILL, (cp.returncode, cp.stderr)
    assert done.exists() and "Land balanced/a " in git(repo, "log", "--format=%s", "-1", "main")
    assert "balanced/a landed" not in inbox_text(repo), "killed before it told anyone"
    [job] = jobs_of(repo, "a")
    assert job["state"] == "landed", "the board says what happened all the same"

    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    text = inbox_text(repo)
    assert text.count("Its check passed, so balanced/a landed in main as ") == 1, text
    assert "already" not in text, text
