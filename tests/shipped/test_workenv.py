"""What of the lead's environment a worker gets (shipped/workenv.py), for each agent."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.shipped.workenv import NO_PUSH, configured_names, no_push, worker_env

LEAD = {"PATH": "/usr/bin", "HOME": "/home/ada", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm",
        "TZ": "UTC", "XDG_CONFIG_HOME": "/home/ada/.config", "GIT_AUTHOR_NAME": "Ada",
        "GITHUB_TOKEN": "ghp", "AWS_SECRET_ACCESS_KEY": "aws", "ANTHROPIC_API_KEY": "ant",
        "CLAUDE_CODE_OAUTH_TOKEN": "oat",
        "OPENAI_API_KEY": "oai", "CODEX_HOME": "/home/ada/.codex", "PI_OFFLINE": "1", "NPM_TOKEN": "npm",
        "SCRIPTED_API_KEY": "scripted", "DATABASE_URL": "postgres://secret"}
# Every worker's git refuses to push, saying why (workenv.no_push).
BASICS = {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "XDG_CONFIG_HOME", "GIT_AUTHOR_NAME", "GIT_CONFIG_COUNT",
          "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"}


def test_each_agent_gets_the_basics_and_its_own_keys_only() -> None:
    assert set(worker_env(LEAD, "shell", [])) == BASICS
    assert set(worker_env(LEAD, "claude", [])) == BASICS | {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}
    assert set(worker_env(LEAD, "codex", [])) == BASICS | {"OPENAI_API_KEY", "CODEX_HOME"}
    assert set(worker_env(LEAD, "pi", [])) == BASICS | {"PI_OFFLINE", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                                       "AWS_SECRET_ACCESS_KEY"}, "Pi's providers include Bedrock"


def test_the_names_the_settings_list_are_passed() -> None:
    assert set(worker_env(LEAD, "shell", ["NPM_TOKEN", "UNSET"])) == BASICS | {"NPM_TOKEN"}


def test_a_key_the_agents_own_config_names_is_passed(tmp_path: Path) -> None:
    """Codex's model provider and Pi's models.json may keep their key in a variable of any name."""
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text('[model_providers.mine]\nname = "mine"\nenv_key = "SCRIPTED_API_KEY"\n')
    pi = tmp_path / ".pi" / "agent"
    pi.mkdir(parents=True)
    (pi / "models.json").write_text(json.dumps({"providers": {"mine": {"apiKey": "SCRIPTED_API_KEY"},
                                                              "inline": {"apiKey": "sk-not-a-name"}}}))
    lead = {**LEAD, "HOME": str(tmp_path), "CODEX_HOME": str(codex)}
    assert configured_names("codex", lead) == ["SCRIPTED_API_KEY"]
    assert configured_names("pi", lead) == ["SCRIPTED_API_KEY"]
    assert "SCRIPTED_API_KEY" in worker_env(lead, "codex", []) and "SCRIPTED_API_KEY" in worker_env(lead, "pi", [])
    assert "SCRIPTED_API_KEY" not in worker_env(lead, "claude", []), "another agent's key stays out"
    (codex / "config.toml").write_text("not [ toml")
    assert configured_names("codex", {**lead}) == [] and configured_names("claude", lead) == []


def test_a_workers_git_refuses_every_push_and_keeps_the_config_it_had() -> None:
    env = no_push({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Ada"})
    assert env["GIT_CONFIG_COUNT"] == "2" and env["GIT_CONFIG_KEY_0"] == "user.name"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == (f"url.{NO_PUSH}.pushInsteadOf", "")
