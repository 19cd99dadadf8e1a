#!/usr/bin/env bash
# Install this project (editable) with the extras named into a virtualenv, from the wheels kept in
# .cache/wheels when they are all there: then no package index is asked, which spares a clean clone the
# half minute pip spends asking it and fetching. When one is missing (the first run, or pyproject.toml
# asks for something new), the wheels are fetched from the index into .cache/wheels first.
#
#   scripts/install-python.sh VENV EXTRAS      # e.g. scripts/install-python.sh .venv test,lint
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=$1 extras=$2
wheels=${GIT_BALANCED_WHEELS:-$top/.cache/wheels}
pip=("$venv/bin/python" -m pip --disable-pip-version-check --quiet)

# What pyproject.toml asks for: the dependencies, those of each extra named, and the build's own (setuptools),
# since the project is then installed without a build environment of its own.
listed=$("$venv/bin/python" - "$top/pyproject.toml" "$extras" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as fh:
    meta = tomllib.load(fh)
extras = meta["project"].get("optional-dependencies", {})
names = [e for e in sys.argv[2].split(",") if e]
for name in names:
    if name not in extras:
        sys.exit(f"install-python: pyproject.toml has no extra named {name!r} (it has: {', '.join(extras)})")
print("\n".join(meta["project"]["dependencies"] + [r for e in names for r in extras[e]]
                + meta["build-system"]["requires"]))
PY
)  # a command substitution, so that an extra pyproject.toml does not name stops the script here (set -e)
mapfile -t wanted <<<"$listed"

offline() { [ -d "$wheels" ] && "${pip[@]}" install --no-index --find-links "$wheels" "${wanted[@]}"; }
if ! offline 2>/dev/null; then
  echo "install-python: fetching the wheels of .[$extras] into $wheels" >&2
  "${pip[@]}" wheel --wheel-dir "$wheels" "${wanted[@]}"
  offline
fi
"${pip[@]}" install --no-index --no-build-isolation --no-deps -e "$top"
