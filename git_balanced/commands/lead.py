"""`git balanced lead on|off`: make this repository's sessions of an agent leads, or stop that."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.kit.project import AGENTS, lead_off, lead_on
from git_balanced.lead import open_checkout

NAMES = {"claude": "Claude Code", "codex": "Codex", "pi": "Pi"}
NEXT = {
    "claude": "Start `claude` here: it asks once to trust the project's MCP server `balanced`; the skill "
              "`balanced-lead` teaches it the job, and its hooks hand it its inbox.",
    "codex": "Codex reads .codex/ only in a project you trusted: start `codex` here and trust it (or run "
             "`codex exec --trust` once). AGENTS.md teaches it the job; its hooks hand it its inbox.",
    "pi": "Start `pi` here: it loads .pi/extensions/balanced-lead.ts (the lead's tools and hooks) and "
          ".pi/APPEND_SYSTEM.md (the job).",
}


def on_command(agent: str) -> int:
    """Write the agent's lead files, keeping what they held."""
    repo = open_checkout()
    done = lead_on(repo, agent)
    for path, what in done:
        ui.say(f"  {what:<13} {path}")
    ui.say(f"{NAMES[agent]}'s sessions in this repository are leads. {NEXT[agent]}")
    ui.note("Commit these files to give the repository's other clones the same lead (workers start from your "
            "last commit either way); `git balanced lead off` takes away exactly what this added.")
    return 0


def off_command(agent: str | None) -> int:
    """Take away what `lead on` added, for one agent or all."""
    repo = open_checkout()
    done = [(a, path, what) for a in ([agent] if agent else list(AGENTS)) for path, what in lead_off(repo, a)]
    for _, path, what in done:
        ui.say(f"  {what:<13} {path}")
    found = [NAMES[a] for a in AGENTS if any(d[0] == a for d in done)]
    names = ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else "".join(found)
    ui.say(f"The sessions of {names} here are no longer leads." if done else
           f"No lead files of {NAMES[agent] if agent else 'any agent'} were here.")
    return 0
