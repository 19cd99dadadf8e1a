"""The lead as a plugin: built from the same templates `lead on` writes, one folder for Claude Code, Codex
and Pi, one SKILL.md for the three."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.kit.plugins import MARKETPLACE, PI_EXTENSION, PLUGIN, plugin_files, write_plugins
from tests.support.builders import make_repo
from tests.support.cli import balanced

ROOT = f"plugins/{PLUGIN}"


def test_the_plugin_holds_what_lead_on_writes(tmp_path: Path) -> None:
    files = plugin_files()
    claude = make_repo(tmp_path / "claude")
    assert balanced(claude, "lead", "on", "--agent", "claude").code == 0
    codex = make_repo(tmp_path / "codex")
    assert balanced(codex, "lead", "on", "--agent", "codex").code == 0
    skill = (claude / ".claude" / "skills" / "balanced-lead" / "SKILL.md").read_text()
    assert files[f"{ROOT}/skills/balanced-lead/SKILL.md"] == skill, "the one skill, as lead on writes it"
    hooks = json.loads(files[f"{ROOT}/hooks/hooks.json"])
    assert hooks["hooks"] == json.loads((claude / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks == json.loads((codex / ".codex" / "hooks.json").read_text()), "Codex's hooks are the same"
    pi = make_repo(tmp_path / "pi")
    assert balanced(pi, "lead", "on", "--agent", "pi").code == 0
    assert files[f"{ROOT}/{PI_EXTENSION}"] == (pi / ".pi" / "extensions" / "balanced-lead.ts").read_text(), \
        "Pi's extension, as lead on writes it"
    server = json.loads(files[f"{ROOT}/.mcp.json"])["mcpServers"]["balanced"]
    approve = server.pop("default_tools_approval_mode")
    assert server == json.loads((claude / ".mcp.json").read_text())["mcpServers"]["balanced"]
    assert f'default_tools_approval_mode = "{approve}"' in (codex / ".codex" / "config.toml").read_text()


def test_each_agent_has_its_manifest_and_catalog() -> None:
    files = {path: json.loads(text) for path, text in plugin_files().items() if path.endswith(".json")}
    claude_market = files[".claude-plugin/marketplace.json"]
    codex_market = files[".agents/plugins/marketplace.json"]
    assert claude_market["name"] == codex_market["name"] == MARKETPLACE
    assert claude_market["plugins"][0]["source"] == f"./{ROOT}"
    assert codex_market["plugins"][0]["source"] == {"source": "local", "path": f"./{ROOT}"}
    claude, codex = files[f"{ROOT}/.claude-plugin/plugin.json"], files[f"{ROOT}/.codex-plugin/plugin.json"]
    assert claude["name"] == codex["name"] == PLUGIN and claude["version"] == codex["version"]
    assert (codex["skills"], codex["mcpServers"], codex["hooks"]) == (
        "./skills/", "./.mcp.json", "./hooks/hooks.json")
    pi = files[f"{ROOT}/package.json"]
    assert pi["version"] == claude["version"] and "pi-package" in pi["keywords"]
    assert pi["pi"] == {"extensions": [f"./{PI_EXTENSION}"], "skills": ["./skills"]}, "the same skill folder"


def test_lead_plugin_writes_the_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    r = balanced(repo, "lead", "plugin", str(tmp_path / "market"))
    assert r.code == 0, r
    assert f"claude plugin install {PLUGIN}@{MARKETPLACE}" in r.out
    assert f"codex plugin add {PLUGIN}@{MARKETPLACE}" in r.out
    assert f"pi install {tmp_path / 'market' / 'plugins' / PLUGIN}" in r.out
    assert sorted(p.relative_to(tmp_path / "market").as_posix() for p in write_plugins(tmp_path / "market")) \
        == sorted(plugin_files())
