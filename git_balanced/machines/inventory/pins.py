"""The versions of the agent CLIs (and of Node.js) this project pins: the one place that names them.

`ready --yes` installs these on a machine; scripts/install-agents.sh installs them for the tests, reading them
with `python3 git_balanced/machines/inventory/pins.py` (one `agent package version` line each). No imports: the script
runs this file alone, before anything is installed.
"""

from __future__ import annotations

# agent -> (npm package, pinned version); the tests were measured against these (tests/fixtures/streams/).
AGENTS = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
    "pi": ("@earendil-works/pi-coding-agent", "1.6.0"),
}
# Packages an agent was published under before: `ready` removes them before installing the pinned one, whose
# binary they hold (npm refuses to replace another package's `~/.local/bin/pi`).
RETIRED = {"pi": ("@mariozechner/pi-coding-agent",)}
# The oldest Node.js each agent runs on (Claude Code's own binary needs Node only for npm to install it).
NODE_NEEDED = {"claude": (18, 0, 0), "codex": (16, 0, 0), "pi": (22, 19, 0)}
# Where a machine has no Node.js or too old a one: the npm registry's prebuilt `node-linux-<arch>`, and npm
# itself when the machine has none.
NODE_VERSION = "22.22.3"
NPM_VERSION = "10.9.4"


def spec(agent: str) -> str:
    """`@anthropic-ai/claude-code@2.1.332`: what npm installs for `agent`."""
    package, version = AGENTS[agent]
    return f"{package}@{version}"


if __name__ == "__main__":
    for name, (package, version) in AGENTS.items():
        print(name, package, version)
