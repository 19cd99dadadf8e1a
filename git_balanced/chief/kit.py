"""`git balanced chief on|off --agent A`: the files in the chief's folder that make the agent's sessions there
chiefs, for a person at the keyboard: the chief's MCP server (`git balanced mcp --chief`), its refusals (a
PreToolUse hook) and its instructions. The chief's folder is git balanced's own, so `off` removes each file that
is still as `on` wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.chief import home
from git_balanced.chief.session import chief_settings, codex_hooks, instructions, pi_extension
from git_balanced.errors import BalancedError
from git_balanced.kit.project import ARGV

AGENTS = ("claude", "codex", "pi")
START = {"claude": "claude", "codex": "codex", "pi": "pi"}


def files(agent: str) -> dict[str, str]:
    """What `chief on --agent AGENT` writes, by path in the chief's folder."""
    server = {"command": ARGV[0], "args": [*ARGV[1:], "mcp", "--chief"]}
    if agent == "claude":
        settings = json.loads(chief_settings(json.dumps(ARGV)))
        settings["permissions"] = {"allow": ["mcp__balanced"]}
        return {".mcp.json": json.dumps({"mcpServers": {"balanced": server}}, indent=2) + "\n",
                ".claude/settings.json": json.dumps(settings, indent=2) + "\n", "CLAUDE.md": instructions()}
    if agent == "codex":
        table = (f"[mcp_servers.balanced]\ncommand = {json.dumps(server['command'])}\n"
                 f"args = {json.dumps(server['args'])}\ndefault_tools_approval_mode = \"approve\"\n")
        return {".codex/config.toml": table, ".codex/hooks.json": codex_hooks(list(ARGV)),
                "AGENTS.md": instructions()}
    if agent == "pi":
        return {".pi/extensions/balanced-chief.ts": pi_extension(), ".pi/APPEND_SYSTEM.md": instructions()}
    raise BalancedError(f"There is no chief for the agent {agent!r}.", hint="one of: " + ", ".join(AGENTS) + ".")


def chief_on(agent: str) -> list[tuple[str, str]]:
    """Write the agent's chief files; (path, what was done) for each. A file of the same name that `on` did not
    write is refused, never overwritten."""
    root = home.folder()
    home.repo()
    todo = files(agent)
    for rel, text in todo.items():
        path = root / rel
        if path.exists() and path.read_text() != text:
            raise BalancedError(f"{path} exists already, and git balanced did not write it.",
                                hint="move it away, or run `git balanced chief off` first.")
    out = []
    for rel, text in todo.items():
        path = root / rel
        there = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append((rel, "already there" if there else "written"))
    return out


def chief_off(agent: str | None) -> list[tuple[str, str]]:
    """Remove the chief files `on` wrote (for one agent or all) that are still as it wrote them."""
    root = home.folder()
    out = []
    for a in [agent] if agent else list(AGENTS):
        for rel, text in files(a).items():
            path = root / rel
            if not path.exists():
                continue
            if path.read_text() != text:
                out.append((rel, "kept: changed since `chief on` wrote it"))
                continue
            path.unlink()
            out.append((rel, "removed"))
            _prune(root, path.parent)
    return out


def _prune(root: Path, folder: Path) -> None:
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
