"""A worker's pen (shipped/pen.py): the user's home read-only, what is the worker's own writable again."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_balanced.shipped import pen


@pytest.fixture(autouse=True)
def _penned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if not pen.available():
        pytest.skip("this machine allows no user namespaces: workers run unpenned here")


def test_the_home_is_read_only_and_the_workers_own_things_are_not(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "work" / "mine").mkdir(parents=True)
    (home / "work" / "theirs").mkdir()
    (home / ".bashrc").write_text("# the user's\n")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    state = pen.agent_state("claude", env)
    assert state == [str(home / ".claude"), str(home / ".claude.json")], "made so that they can be bound"
    readonly, writable = pen.folders(env, [str(home / "work" / "mine"), *state])
    assert readonly[0] == str(home.resolve()) and "/usr/bin" in readonly and "/" not in readonly
    script = ('echo x > mine.txt && echo "{}" > ~/.claude.json && touch ~/.claude/session; echo "own=$?"; '
              'echo x > ../theirs/f; echo "sibling=$?"; echo x >> ~/.bashrc; echo "bashrc=$?"; '
              'touch /usr/bin/planted; echo "path=$?"')
    cp = subprocess.run(pen.wrap(["sh", "-c", script], readonly, writable), cwd=home / "work" / "mine",
                        capture_output=True, text=True, env={**os.environ, **env}, timeout=30)
    assert cp.stdout.split() == ["own=0", "sibling=2", "bashrc=2", "path=1"], cp
    assert cp.stderr.count("Read-only file system") == 3, cp.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n" and not (home / "work" / "theirs" / "f").exists()
    assert (home / "work" / "mine" / "mine.txt").exists() and (home / ".claude" / "session").exists()


def test_an_agents_state_is_where_its_variable_moves_it(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "elsewhere" / "codex"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    assert pen.agent_state("codex", env) == [str(tmp_path / "elsewhere" / "codex")]
    assert pen.agent_state("claude", env) == [str(tmp_path / "claude-config")], "its .claude.json is in there"
    assert pen.agent_state("shell", env) == [] and not (tmp_path / ".codex").exists()
