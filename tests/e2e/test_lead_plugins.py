"""The lead's plugin installed by the real Claude Code and Codex CLIs from the local marketplace `lead
plugin` writes (and its Pi package by the real Pi CLI), then a headless session in a repository where `lead
on` never ran calls the lead's tools through it (the scripted model plans two shell pieces and reads the
board)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_balanced.kit.headless import MCP_WAIT
from git_balanced.kit.plugins import MARKETPLACE, PLUGIN
from tests.e2e.test_lead_agents import TASK, lead_runs, lead_turns
from tests.support.cli import balanced
from tests.support.plans import lead_repo
from tests.support.real_agents import bodies, real_agents

SELECTOR = f"{PLUGIN}@{MARKETPLACE}"


def cli(*argv: str) -> str:
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, f"{argv}: {cp.stdout}{cp.stderr}"
    return cp.stdout + cp.stderr


def marketplace(tmp_path: Path, repo: Path) -> Path:
    market = tmp_path / "market"
    assert balanced(repo, "lead", "plugin", str(market)).code == 0
    return market


def test_claude_code_installs_the_plugin_and_leads_through_it(tmp_path: Path, agent_bin: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"claude": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        market = marketplace(tmp_path, repo)
        assert "Validation passed" in cli("claude", "plugin", "validate", str(market))
        cli("claude", "plugin", "marketplace", "add", str(market))
        cli("claude", "plugin", "install", SELECTOR)
        assert SELECTOR in cli("claude", "plugin", "list")
        assert not (repo / ".mcp.json").exists() and not (repo / ".claude").exists(), "no lead on here"
        home = Path(os.environ["HOME"])
        claude_json = home / ".claude.json"
        state = json.loads(claude_json.read_text()) if claude_json.exists() else {}
        state.setdefault("projects", {})[str(repo)] = {"hasTrustDialogAccepted": True}
        claude_json.write_text(json.dumps(state))
        env = {**os.environ, "ENABLE_TOOL_SEARCH": "false", **MCP_WAIT}  # as the headless lead waits for it
        # A plugin cannot allow its own tools, as `lead on`'s settings do: the person allows them once.
        ran = lead_runs(repo, ["claude", "-p", TASK, "--output-format", "stream-json", "--verbose",
                               "--allowedTools", f"mcp__plugin_{PLUGIN}_balanced"], env)
        sent = bodies(servers.claude)
    assert f"mcp__plugin_{PLUGIN}_balanced__plan" in sent[0], "the plugin's server gives the lead its tools"
    assert "balanced-lead" in sent[0], "the plugin's skill is offered"
    events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    results = [c for e in events if e.get("type") == "user" for c in e["message"]["content"]
               if isinstance(c, dict) and c.get("type") == "tool_result"]
    assert len(results) >= 2 and not any(r.get("is_error") for r in results), results
    assert "balanced/alpha" in json.dumps(results[0]["content"]), "the plan says where each piece goes"


def test_codex_installs_the_plugin_and_leads_through_it(tmp_path: Path, agent_bin: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"codex": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        market = marketplace(tmp_path, repo)
        cli("codex", "plugin", "marketplace", "add", str(market))
        cli("codex", "plugin", "add", SELECTOR)
        assert "installed, enabled" in cli("codex", "plugin", "list")
        with open(Path(os.environ["HOME"]) / ".gitconfig", "a") as config:
            config.write("[user]\n\tname = Ada Lead\n\temail = ada@example.com\n")
        ran = lead_runs(repo, ["codex", "exec", "--json", "--trust", TASK])
        sent = servers.codex.main_requests()
    calls = [json.loads(line)["item"] for line in ran.stdout.splitlines()
             if line.startswith('{"type":"item.completed"') and '"mcp_tool_call"' in line]
    assert [(c["tool"], c["status"]) for c in calls] == [("plan", "completed"), ("board", "completed")], calls
    assert "balanced/alpha" in json.dumps(calls[0]["result"]), "the plan says where each piece goes"
    assert "balanced-lead" in json.dumps(sent[0].body), "the plugin's skill is offered"


def test_pi_installs_the_package_and_leads_through_it(tmp_path: Path, agent_bin: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"pi": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        package = marketplace(tmp_path, repo) / "plugins" / PLUGIN
        cli("pi", "install", str(package))
        assert str(package) in cli("pi", "list")
        assert not (repo / ".pi").exists(), "no lead on here"
        ran = lead_runs(repo, ["pi", "--mode", "json", "--no-session", TASK])
        sent = bodies(servers.pi)
    assert '"plan"' in sent[0] and '"put_to_you"' in sent[0], "the package's extension gives the lead its tools"
    assert "balanced-lead" in sent[0] and str(package / "skills") in sent[0], "the package's skill is offered"
    ends = [json.loads(line) for line in ran.stdout.splitlines() if '"tool_execution_end"' in line]
    assert [(e["toolName"], e["isError"]) for e in ends] == [("plan", False), ("board", False)], ends
    assert "balanced/alpha" in json.dumps(ends[0]["result"]), "the plan says where each piece goes"
