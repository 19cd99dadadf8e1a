"""`deny --for-now`: the setup and check are refused for this run of the engine, and asked for again after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan


def _state(repo: Path) -> str:
    return str(json.loads(balanced(repo, "trust", "--json").out)["state"])


def test_not_now_lasts_for_one_engine_run(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)  # allowed
    said = balanced(repo, "deny", "--for-now")
    assert said.code == 0 and "Not now: nothing runs these for the next engine run; after it they are allowed " \
        "again" in said.out, said
    assert _state(repo) == "not now"
    checked = balanced(repo, "check")
    assert checked.code == 1 and "You said not now" in checked.err and "git balanced allow" in checked.err, checked
    assert plan(repo, [piece("a", "echo a > src/a.txt")], "--start").code == 0
    # The next engine run (a process of its own) is the one it is for: nothing starts, and once it has ended
    # the commands stand as they stood before (allowed).
    ran = subprocess.run([sys.executable, "-m", "git_balanced.cli", "engine", "--once"], cwd=repo, env=dict(os.environ),
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert "Nothing starts: you said not now" in ran.stderr, ran
    assert json.loads(balanced(repo, "board", "--json").out)["jobs"] == [], "nothing started in that run"
    assert _state(repo) == "allowed", "after its run, what stood before stands again"


def test_not_now_on_commands_never_approved_asks_again_after(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=None, extra="")
    (repo / ".magnum/settings.toml").write_text('[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n')
    assert balanced(repo, "deny", "--for-now").code == 0
    shown = balanced(repo, "trust")
    assert "refused for this run of the engine" in shown.out, shown
    allowed = balanced(repo, "allow", "--yes")
    assert allowed.code == 0 and _state(repo) == "allowed", "allow approves them at once"
