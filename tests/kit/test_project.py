"""`git balanced lead on|off`: each agent's project files, written in its own conventions, and taken away
again so that what the repository held is there byte for byte."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.support.builders import git, make_repo
from tests.support.cli import balanced

THEIRS = {
    ".mcp.json": '{\n    "mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}\n}',
    ".claude/settings.json": '{"permissions": {"allow": ["Bash(make test)"]},\n "hooks": {"Stop": [{"hooks": '
                             '[{"type": "command", "command": "notify-send done"}]}]}}\n',
    ".codex/config.toml": '# our Codex settings\nmodel = "gpt-5.5"\n\n[mcp_servers.docs]\ncommand = "docs-server"',
    "AGENTS.md": "# How we work here\n\nRun `make test` before you commit.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "lead", THEIRS)


def files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts}


def folders(repo: Path) -> set[str]:
    return {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_dir() and ".git" not in p.parts}


def test_on_then_off_leaves_every_file_byte_for_byte(repo: Path) -> None:
    before, dirs = files(repo), folders(repo)
    for agent in ("claude", "codex", "pi"):
        r = balanced(repo, "lead", "on", "--agent", agent)
        assert r.code == 0, r
    mcp = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert mcp["docs"] == {"command": "docs-server", "args": ["--stdio"]}, "their server is kept"
    assert mcp["balanced"] == {"command": "git", "args": ["balanced", "mcp"]}
    claude = json.loads((repo / ".claude/settings.json").read_text())
    assert claude["permissions"]["allow"] == ["Bash(make test)", "mcp__balanced"]
    assert [g["hooks"][0]["command"] for g in claude["hooks"]["Stop"]] == ["notify-send done",
                                                                         "git balanced hook stop"]
    assert "git balanced hook user-prompt-submit" in json.dumps(claude["hooks"]["UserPromptSubmit"])
    skill = (repo / ".claude/skills/balanced-lead/SKILL.md").read_text()
    assert skill.startswith("---\nname: balanced-lead\ndescription: ") and "put_to_you" in skill
    codex = tomllib.loads((repo / ".codex/config.toml").read_text())
    assert codex["model"] == "gpt-5.5" and set(codex["mcp_servers"]) == {"docs", "balanced"}
    assert codex["mcp_servers"]["balanced"] == {"command": "git", "args": ["balanced", "mcp"],
                                                "default_tools_approval_mode": "approve"}
    assert "git balanced hook stop" in (repo / ".codex/hooks.json").read_text()
    agents_md = (repo / "AGENTS.md").read_text()
    assert agents_md.startswith(THEIRS["AGENTS.md"]) and "When to split" in agents_md
    ext = (repo / ".pi/extensions/balanced-lead.ts").read_text()
    assert '"name": "plan"' in ext and '"mcp", "--call"' in ext and "registerTool" in ext
    assert "`after` and `paths`" in (repo / ".pi/APPEND_SYSTEM.md").read_text()
    again = balanced(repo, "lead", "on", "--agent", "claude")
    assert again.code == 0 and "already there" in again.out, "on twice changes nothing"

    r = balanced(repo, "lead", "off")
    assert r.code == 0, r
    assert files(repo) == before, "every file as it was, byte for byte, and none left behind"
    assert folders(repo) == dirs, "no folder left behind"
    assert git(repo, "status", "--porcelain") == ""


def test_off_takes_out_only_its_part_of_a_file_changed_since(repo: Path) -> None:
    assert balanced(repo, "lead", "on", "--agent", "claude").code == 0
    assert balanced(repo, "lead", "on", "--agent", "codex").code == 0
    data = json.loads((repo / ".mcp.json").read_text())
    data["mcpServers"]["search"] = {"command": "search-server"}
    (repo / ".mcp.json").write_text(json.dumps(data))
    with (repo / "AGENTS.md").open("a") as f:
        f.write("\nKeep commits small.\n")
    r = balanced(repo, "lead", "off", "--agent", "claude")
    assert r.code == 0 and "taken out of  .mcp.json" in r.out, r
    assert set(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == {"docs", "search"}
    assert balanced(repo, "lead", "off", "--agent", "codex").code == 0
    text = (repo / "AGENTS.md").read_text()
    assert text == THEIRS["AGENTS.md"] + "\nKeep commits small.\n", "their new line kept, the block gone"
    assert (repo / ".codex/config.toml").read_text() == THEIRS[".codex/config.toml"]


def test_on_refuses_a_file_it_cannot_read_and_writes_nothing(repo: Path) -> None:
    (repo / ".claude/settings.json").write_text("{not json")
    before = files(repo)
    r = balanced(repo, "lead", "on", "--agent", "claude")
    assert r.code == 1 and "is not JSON" in r.err and "hint: " in r.err, r
    assert files(repo) == before, "nothing written when one file cannot be added to"
    (repo / ".codex/config.toml").write_text('[mcp_servers.balanced]\ncommand = "mine"\n')
    r = balanced(repo, "lead", "on", "--agent", "codex")
    assert r.code == 1 and "mcp_servers.balanced of its own" in r.err, r
