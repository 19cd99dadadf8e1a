"""`git balanced lead plugin DIR`: the lead as one plugin for Claude Code and Codex, and one Pi package, in a
local marketplace.

The plugin holds what `lead on` writes into one repository (kit/project.py), from the same templates: the
`balanced` MCP server, the hooks that hand the lead its inbox, and the skill `balanced-lead`; for Pi, which has
no MCP, the extension `lead on --agent pi` writes (the same tools, and the hooks). Installed once, it makes
the agent's sessions leads in every repository. One folder serves the three agents, as each reads its own
manifest and ignores the others':

    DIR/.claude-plugin/marketplace.json       Claude Code's catalog (`claude plugin marketplace add DIR`)
    DIR/.agents/plugins/marketplace.json      Codex's catalog (`codex plugin marketplace add DIR`)
    DIR/plugins/balanced/.claude-plugin/plugin.json
    DIR/plugins/balanced/.codex-plugin/plugin.json
    DIR/plugins/balanced/.mcp.json            the MCP server
    DIR/plugins/balanced/hooks/hooks.json     UserPromptSubmit and Stop
    DIR/plugins/balanced/package.json         Pi's package manifest (`pi install DIR/plugins/balanced`)
    DIR/plugins/balanced/extensions/balanced-lead.ts     Pi's extension: the lead's tools and hooks
    DIR/plugins/balanced/skills/balanced-lead/SKILL.md   the one skill every agent that reads skills reads
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from git_balanced import __version__
from git_balanced.agents.wiring import render
from git_balanced.files import write_atomic
from git_balanced.kit.project import ARGV, parts, pi_extension

MARKETPLACE = "git-balanced"
PLUGIN = "balanced"
SKILL = "balanced-lead"
PI_PACKAGE = "git-balanced-lead"
PI_EXTENSION = "extensions/balanced-lead.ts"
DESCRIPTION = ("Lead any repository with git balanced: its MCP server (plan, start, answer, land), the hooks "
               "that hand the lead its inbox, and the skill that teaches the job.")


def plugin_files() -> dict[str, str]:
    """Each file of the marketplace folder (relative path -> text)."""
    skill = next(p for p in parts("claude") if p.path.endswith("/SKILL.md")).add
    hooks = json.loads(render("claude-lead-settings.json", ARGV))
    # Codex asks before each MCP tool call, and `codex exec` (approval "never") refuses them: the plugin's
    # server approves its own tools, as `lead on`'s [mcp_servers.balanced] does; Claude Code ignores the key.
    server = {"command": ARGV[0], "args": [*ARGV[1:], "mcp"], "default_tools_approval_mode": "approve"}
    manifest: dict[str, Any] = {"name": PLUGIN, "version": __version__, "description": DESCRIPTION,
                                "author": {"name": "git balanced"}}
    codex = {**manifest, "skills": "./skills/", "mcpServers": "./.mcp.json", "hooks": "./hooks/hooks.json",
             "interface": {"displayName": "git balanced lead", "category": "Coding"}}
    root = f"plugins/{PLUGIN}"
    files = {
        ".claude-plugin/marketplace.json": {
            "name": MARKETPLACE, "owner": {"name": "git balanced"},
            "metadata": {"description": "The git balanced lead, as a plugin."},
            "plugins": [{"name": PLUGIN, "source": f"./{root}", "description": DESCRIPTION}]},
        ".agents/plugins/marketplace.json": {
            "name": MARKETPLACE, "interface": {"displayName": "git balanced"},
            "plugins": [{"name": PLUGIN, "source": {"source": "local", "path": f"./{root}"},
                         "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                         "category": "Coding"}]},
        f"{root}/.claude-plugin/plugin.json": manifest,
        f"{root}/.codex-plugin/plugin.json": codex,
        f"{root}/.mcp.json": {"mcpServers": {"balanced": server}},
        f"{root}/hooks/hooks.json": hooks,
        f"{root}/package.json": {
            "name": PI_PACKAGE, "version": __version__, "description": DESCRIPTION, "private": True,
            "keywords": ["pi-package"], "pi": {"extensions": [f"./{PI_EXTENSION}"], "skills": ["./skills"]}},
    }
    out = {path: json.dumps(data, indent=2) + "\n" for path, data in files.items()}
    out[f"{root}/skills/{SKILL}/SKILL.md"] = skill
    out[f"{root}/{PI_EXTENSION}"] = pi_extension()
    return out


def write_plugins(dest: Path) -> list[Path]:
    """Write the marketplace folder at `dest` (its files replaced, others left alone); the files written."""
    written = []
    for rel, text in plugin_files().items():
        path = Path(dest) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o644)
        written.append(path)
    return written
