"""Codex with approvals off (`approval_policy="never"`, what `codex exec` runs with) and the balanced tools.

Codex 0.171 decides each MCP call by the server's approval mode and the tool's annotations, the same way
every time: with no approval mode for our server (a person's own setup) a call needs an approval, so is
refused before our server hears of it (`MCP tool call requires approval, but approval policy is never`), when
the tool is destructive, or is not read-only and is open-world. So `board` (read-only) and `land` (closed-world,
not destructive) go through and `plan` (open-world: it starts agents on machines) is refused. No hint is bent
to get past it: the lead that plans has the server's approval mode (`default_tools_approval_mode = "approve"`,
which `lead on`, the plugins and the headless lead set), and then every tool goes through. The real Codex CLI
against the scripted model server: the scripted turns plan two shell pieces, land a branch the person made,
and read the board."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.model_server import call_tool, say
from tests.support.plans import board, inbox_text, lead_repo, piece
from tests.support.real_agents import real_agents
from tests.support.wait import wait_until

PIECES = [piece("alpha", "echo alpha > src/alpha.txt"), piece("beta", "echo beta > src/beta.txt")]
TASK = "Write src/alpha.txt and src/beta.txt in two pieces, and land my branch feature."
# Our server for one run, as a person's own setup names it: no `default_tools_approval_mode`, nothing approved.
SERVER = ["-c", 'mcp_servers.balanced.command="git"', "-c", 'mcp_servers.balanced.args=["balanced", "mcp"]']


def _codex(repo: Path, *server: str) -> list[dict[str, object]]:
    """One `codex exec` in the repository with approvals off and our server as given: its tool calls."""
    argv = ["codex", "exec", "--json", "--skip-git-repo-check", "-c", 'approval_policy="never"', *SERVER, *server,
            TASK]
    ran = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    return [json.loads(line)["item"] for line in ran.stdout.splitlines()
            if line.startswith('{"type":"item.completed"') and '"mcp_tool_call"' in line]


def _feature_branch(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "src" / "feature.txt").write_text("feature\n")
    git(repo, "add", "src/feature.txt")
    git(repo, "commit", "-q", "-m", "Add src/feature.txt")
    git(repo, "switch", "-q", "main")


def test_codex_with_approvals_off_reads_freely_and_plans_and_lands_with_the_servers_approval(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [call_tool("plan", {"task": TASK, "pieces": PIECES}), call_tool("land", {"names": ["feature"]}),
             call_tool("board", {}), say("Done.")]
    with real_agents(monkeypatch, agent_bin, {"codex": turns * 2}):
        repo = lead_repo(tmp_path)
        _feature_branch(repo)
        # Codex starts an MCP server with a few variables of its environment only: the engine the plan starts
        # knows the person by ~/.gitconfig, as a person's home has it.
        with open(Path(os.environ["HOME"]) / ".gitconfig", "a") as config:
            config.write("[user]\n\tname = Ada Lead\n\temail = ada@example.com\n")
        own = _codex(repo)
        status = {str(c["tool"]): c["status"] for c in own}
        # `plan` reaches past the repository (open world): refused. `land` is neither destructive nor open-world,
        # and `board` is read-only: both let through.
        assert status == {"plan": "failed", "land": "completed", "board": "completed"}, own
        assert {json.dumps(c["error"]) for c in own if c["status"] == "failed"} == \
            {json.dumps({"message": "MCP tool call requires approval, but approval policy is never"})}, own
        assert board(repo)["plans"] == [], "a refused call never reached the server"
        try:
            calls = _codex(repo, "-c", 'mcp_servers.balanced.default_tools_approval_mode="approve"')
            wait_until(lambda: {r["piece"]: r["state"] for r in board(repo)["jobs"]}  # type: ignore[index]
                       == {"alpha": "landed", "beta": "landed"}, 120, "alpha and beta to land",
                       said=lambda: inbox_text(repo))
        finally:
            balanced(repo, "engine", "--stop")
    assert [(c["server"], c["tool"], c["status"]) for c in calls] == [
        ("balanced", "plan", "completed"), ("balanced", "land", "completed"), ("balanced", "board", "completed")], \
        calls
    assert "balanced/alpha" in json.dumps(calls[0]["result"]), "the plan says where each piece goes"
    assert '"already"' in json.dumps(calls[1]["result"]), "the first run landed it: " + json.dumps(calls[1]["result"])
    assert git(repo, "show", "main:src/feature.txt") == "feature", "feature landed on main"
    assert (repo / "src" / "alpha.txt").read_text() == "alpha\n" and (repo / "src" / "beta.txt").read_text() == "beta\n"
