"""What a machine has of the agent CLIs, asked of the real CLIs' own status commands (no model is called)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced.machines import agents_probe
from tests.support import agent_home


def _point(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], agent_bin: str) -> None:
    for key in [k for k in os.environ if k not in env]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", agent_bin + os.pathsep + env["PATH"])


def test_each_cli_says_whether_it_is_signed_in(tmp_path: Path, agent_bin: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    url = "http://127.0.0.1:9"  # a closed port: a probe that called a model would fail, not hang
    env = agent_home.claude_env(home, url)
    env.update(agent_home.codex_env(home, url))
    env.update(agent_home.pi_env(home, url))
    _point(monkeypatch, env, agent_bin)
    facts = agents_probe.probe(None)
    for agent in agents_probe.AGENTS:
        f = facts["agents"][agent]
        assert f["installed"] and f["signed_in"] and f["version"], (agent, f)
        assert agents_probe.missing_words(agent, f) == ""
    assert facts["git"] and facts["node"], facts
    assert facts["agents"]["pi"]["node_needed"] == "22.19"

    bare = tmp_path / "bare"  # the same CLIs, with no key, no login and no provider of its own
    _point(monkeypatch, {**agent_home._base(bare), "CODEX_HOME": str(bare / ".codex")}, agent_bin)
    (bare / ".codex").mkdir(parents=True)
    facts = agents_probe.probe(None, ["claude", "codex", "pi"])
    for agent, name in (("claude", "Claude Code"), ("codex", "Codex"), ("pi", "Pi")):
        f = facts["agents"][agent]
        assert f["installed"] and not f["signed_in"], (agent, f)
        assert agents_probe.missing_words(agent, f) == f"not signed in to {name}"
    assert facts["agents"]["claude"]["sign_in_hint"] == "run `claude /login`"

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    gone = agents_probe.probe(None, ["codex"])["agents"]["codex"]
    assert not gone["installed"] and agents_probe.missing_words("codex", gone) == "Codex is not installed there"
