"""The real agent CLIs as leads after `git balanced lead on`: the scripted model's turns call the lead's
tools (plan two shell pieces, read the board), and the pieces land through the engine the plan started.

Claude Code reaches them through the `balanced` MCP server of `.mcp.json`, Codex through the one of
`.codex/config.toml` (Codex 0.171 defers MCP tools behind its `tool_search`: the scripted model searches for
each tool before it calls it), Pi through the extension that registers the same tools."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_balanced.kit.headless import MCP_WAIT
from tests.support.cli import balanced
from tests.support.model_server import call_tool, say
from tests.support.plans import board, inbox_text, lead_repo, piece
from tests.support.real_agents import bodies, real_agents
from tests.support.wait import wait_until

PIECES = [piece("alpha", "echo alpha > src/alpha.txt"), piece("beta", "echo beta > src/beta.txt")]
TASK = "Write src/alpha.txt and src/beta.txt, in two pieces."


def lead_turns() -> list:
    return [call_tool("plan", {"task": TASK, "pieces": PIECES}),
            call_tool("board", {}),
            say("I planned alpha and beta; the engine runs them and they land when the check passes.")]


def trusted_once(repo: Path) -> None:
    """What a person's first interactive start in the repository records: the workspace trusted, and the
    project's server `balanced` approved."""
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"projects": {str(repo): {"hasTrustDialogAccepted": True}}}))
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": ["balanced"]}))


def landed(repo: Path) -> bool:
    return {r["piece"]: r["state"] for r in board(repo)["jobs"]} == {"alpha": "landed", "beta": "landed"}  # type: ignore[index]


def lead_runs(repo: Path, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the lead agent in the repository to its end, then wait for its plan's two pieces to land (the engine
    its plan started is stopped either way); its run, for the test to read."""
    try:
        ran = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=240,
                             stdin=subprocess.DEVNULL)
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        wait_until(lambda: landed(repo), 120, "alpha and beta to land",
                   said=lambda: inbox_text(repo) + "\n" + ran.stdout[-3000:])
    finally:
        balanced(repo, "engine", "--stop")
    assert (repo / "src" / "alpha.txt").read_text() == "alpha\n" and (repo / "src" / "beta.txt").read_text() == "beta\n"
    return ran


def test_claude_code_leads_through_the_balanced_tools(tmp_path: Path, agent_bin: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"claude": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        on = balanced(repo, "lead", "on", "--agent", "claude")
        assert on.code == 0, on
        trusted_once(repo)
        # Claude Code defers MCP tools behind its ToolSearch tool unless told not to, and in a `-p` run it
        # asks the model before its servers connected unless told to wait, and waits 5 s at most unless told
        # longer (kit/headless.py's MCP_WAIT): the scripted model calls the tools by name at once, as a
        # person's first prompt comes after the server is up.
        env = {**os.environ, "ENABLE_TOOL_SEARCH": "false", **MCP_WAIT}
        ran = lead_runs(repo, ["claude", "-p", TASK, "--output-format", "stream-json", "--verbose"], env)
        sent = bodies(servers.claude)
    assert "mcp__balanced__plan" in sent[0] and "mcp__balanced__put_to_you" in sent[0], "the lead has the tools"
    events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    results = [c for e in events if e.get("type") == "user" for c in e["message"]["content"]
               if isinstance(c, dict) and c.get("type") == "tool_result"]
    assert len(results) >= 2 and not any(r.get("is_error") for r in results), results
    placed = json.dumps(results[0]["content"])
    assert "local" in placed and "balanced/alpha" in placed, "the plan says where each piece goes"



def test_codex_leads_through_the_balanced_tools(tmp_path: Path, agent_bin: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"codex": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        on = balanced(repo, "lead", "on", "--agent", "codex")
        assert on.code == 0, on
        # Codex starts an MCP server with a few variables of its environment only (HOME, PATH, ...), so the
        # engine it starts knows you by your ~/.gitconfig, as a person's home has it, not by GIT_AUTHOR_*.
        with open(Path(os.environ["HOME"]) / ".gitconfig", "a") as config:
            config.write("[user]\n\tname = Ada Lead\n\temail = ada@example.com\n")
        # --trust: what a person's first start here offers, so Codex reads the project's .codex/
        ran = lead_runs(repo, ["codex", "exec", "--json", "--trust", TASK])
        sent = servers.codex.main_requests()
    calls = [json.loads(line)["item"] for line in ran.stdout.splitlines()
             if line.startswith('{"type":"item.completed"') and '"mcp_tool_call"' in line]
    assert [(c["server"], c["tool"], c["status"]) for c in calls] == [("balanced", "plan", "completed"),
                                                                     ("balanced", "board", "completed")], calls
    assert "balanced/alpha" in json.dumps(calls[0]["result"]), "the plan says where each piece goes"
    searched = [i for r in sent for i in r.body.get("input") or [] if i.get("type") == "tool_search_output"]
    assert any(t["name"] == "mcp__balanced" for s in searched for t in s["tools"]), "found by tool_search"
    assert "When to split" in json.dumps(sent[0].body), "AGENTS.md teaches it the job"


def test_pi_leads_through_the_balanced_tools(tmp_path: Path, agent_bin: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"pi": lead_turns()}) as servers:
        repo = lead_repo(tmp_path)
        on = balanced(repo, "lead", "on", "--agent", "pi")
        assert on.code == 0, on
        # --approve: what a person's first start here answers to Pi's project-trust question, so it loads
        # .pi/extensions/ and .pi/APPEND_SYSTEM.md (Pi 1.x loads neither in an untrusted project)
        lead_runs(repo, ["pi", "--mode", "json", "--no-session", "--approve", TASK])
        sent = bodies(servers.pi)
    assert '"plan"' in sent[0] and '"put_to_you"' in sent[0], "the extension gives the lead its tools"
    assert "When to split" in sent[0], ".pi/APPEND_SYSTEM.md teaches it the job"
