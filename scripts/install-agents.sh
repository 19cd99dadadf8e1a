#!/usr/bin/env bash
# Install the coding-agent CLIs the tests and workers run, from the npm registry, into a project-local
# folder (never globally). Skips the install when the pinned versions are already there.
#
#   scripts/install-agents.sh [PREFIX]      # default PREFIX: <project>/.cache/agents
#
# Prints one line per CLI: its name and the path of its binary.
set -euo pipefail

# The versions the tests were measured against; bump them together with tests/fixtures/streams/.
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
PI_VERSION=0.73.1

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${GIT_BALANCED_AGENTS:-$top/.cache/agents}}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

command -v npm >/dev/null || {
  echo "install-agents: npm is not installed; install Node.js 20 or later (apt-get install nodejs npm)" >&2
  exit 1
}

installed() {  # installed PACKAGE VERSION: is exactly that version in the prefix?
  local manifest="$prefix/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
    "$manifest" "$2"
}

wanted=(
  "@anthropic-ai/claude-code@$CLAUDE_VERSION"
  "@openai/codex@$CODEX_VERSION"
  "@mariozechner/pi-coding-agent@$PI_VERSION"
)
if installed @anthropic-ai/claude-code "$CLAUDE_VERSION" && installed @openai/codex "$CODEX_VERSION" \
  && installed @mariozechner/pi-coding-agent "$PI_VERSION" && [ -x "$prefix/node_modules/.bin/claude" ]; then
  echo "install-agents: pinned versions already in $prefix" >&2
else
  echo "install-agents: installing ${wanted[*]} into $prefix" >&2
  # No audit or funding calls: only the registry itself is reachable.
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "${wanted[@]}" >&2
fi

for bin in claude codex pi; do
  path="$prefix/node_modules/.bin/$bin"
  if [ ! -x "$path" ]; then
    echo "install-agents: $bin is missing from $prefix/node_modules/.bin after the install" >&2
    exit 1
  fi
  echo "$bin $path"
done
