"""One PreToolUse decision: the runner sent to another machine carries pretool.py beside its script, and a
python3 that cannot import git balanced decides there exactly as git balanced's own hook does here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_balanced.agents import wiring
from git_balanced.hooks import agent as agent_hooks
from git_balanced.shipped import guard, pretool, runner
from tests.support.builders import make_repo

SPEC = {"piece": "docs", "job": "j1", "paths": ["docs/**"], "owners": {"api": ["src/**"]}}


def test_the_sent_runner_writes_the_one_decision_and_it_judges_as_the_hook_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: dict = {"__name__": "sent"}  # the runner as another machine gets it: source(), no file beside it
    exec(compile(runner.source(), "runner-sent", "exec"), sent)
    run_dir = tmp_path / "runs" / "j1"
    folder = Path(sent["_write_ask_shim"](str(run_dir), wiring.hook_rules()))
    assert (folder / "pretool.py").read_text() == Path(pretool.__file__).read_text(), "the very same file"
    (run_dir / "hooks").mkdir()
    (run_dir / "hooks" / "guard.json").write_text(json.dumps(SPEC))
    (run_dir / "hooks" / "pre-commit").write_text(Path(guard.__file__).read_text())
    tree = make_repo(tmp_path / "tree")
    env = {"GIT_BALANCED_JOB": "j1", "BALANCED_RUN_DIR": str(run_dir), "GIT_BALANCED_WORKTREE": str(tree)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    python3 = shutil.which("python3", path="/usr/bin:/bin")
    assert python3, "a system python3"
    for path, refused in ((f"{tree}/src/app.py", True), (f"{tree}/docs/a.md", False)):
        payload = {"hook_event_name": "PreToolUse", "cwd": str(tree), "tool_name": "Write",
                   "tool_input": {"file_path": path}}
        # -I: git balanced cannot be imported there, so the decision can only come from pretool.py in bin/.
        cp = subprocess.run([python3, "-I", str(folder / "git-balanced"), "hook", "pre-tool-use"],
                            input=json.dumps(payload), env={**os.environ, **env}, capture_output=True, text=True,
                            timeout=30)
        assert cp.returncode == 0, cp.stderr
        there = json.loads(cp.stdout) if cp.stdout else None
        assert there == agent_hooks.pre_tool_use(payload), f"{path}: the same decision on both machines"
        assert (there is not None and there["hookSpecificOutput"]["permissionDecision"] == "deny") == refused
