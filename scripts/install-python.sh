#!/usr/bin/env bash
# Make a virtualenv and install this project (editable) with the extras named into it, from the wheels kept
# in .cache/wheels: no package index is asked when they are all there. When one is missing (the first run,
# or pyproject.toml asks for something new), the wheels are fetched from the index into .cache/wheels first.
#
# The installer is uv, kept in .cache/uv (its wheel comes from the index like the others): it installs
# the 55 wheels and byte-compiles them on both cores in a few seconds, where pip takes about twenty on one.
# Where uv cannot be had, pip installs them.
#
#   scripts/install-python.sh VENV EXTRAS      # e.g. scripts/install-python.sh .venv test,lint
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=$1 extras=$2
py=${PY:-python3}
wheels=${GIT_BALANCED_WHEELS:-$top/.cache/wheels}
uv_version=0.13.9
uv_home=$top/.cache/uv
uv=$uv_home/$uv_version/uv
export UV_CACHE_DIR=$uv_home/cache UV_NO_CONFIG=1

[ -x "$venv/bin/python" ] || "$py" -m venv --without-pip "$venv"
python=$venv/bin/python

# What pyproject.toml asks for: the dependencies, those of each extra named, and the build's own (setuptools),
# since the project is then installed without a build environment of its own; and pip, which the venv is
# made without (pip's own wheel is one of the cached ones).
listed=$("$python" - "$top/pyproject.toml" "$extras" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as fh:
    meta = tomllib.load(fh)
extras = meta["project"].get("optional-dependencies", {})
names = [e for e in sys.argv[2].split(",") if e]
for name in names:
    if name not in extras:
        sys.exit(f"install-python: pyproject.toml has no extra named {name!r} (it has: {', '.join(extras)})")
print("\n".join(meta["project"]["dependencies"] + [r for e in names for r in extras[e]]
                + meta["build-system"]["requires"] + ["pip"]))
PY
)  # a command substitution, so that an extra pyproject.toml does not name stops the script here (set -e)
mapfile -t wanted <<<"$listed"

fetch() {  # pip, to fetch wheels from the index into .cache/wheels (it knows the index configured here)
  "$python" -m pip --version >/dev/null 2>&1 || "$python" -m ensurepip --default-pip >/dev/null
  "$python" -m pip --disable-pip-version-check --quiet "$@"
}

get_uv() {  # uv from its wheel in .cache/wheels, fetched there when missing; false when it cannot be had
  [ -x "$uv" ] && return 0
  local whl
  whl=$(ls "$wheels"/uv-"$uv_version"-*.whl 2>/dev/null | head -1) || true
  if [ -z "$whl" ]; then
    fetch download --no-deps --only-binary :all: --dest "$wheels" "uv==$uv_version" 2>/dev/null || return 1
    whl=$(ls "$wheels"/uv-"$uv_version"-*.whl 2>/dev/null | head -1) || true
    [ -n "$whl" ] || return 1
  fi
  "$py" - "$whl" "$uv" "$uv_version" <<'PY'
import os, sys, zipfile
whl, dest, version = sys.argv[1:]
os.makedirs(os.path.dirname(dest), exist_ok=True)
with zipfile.ZipFile(whl) as z:
    data = z.read(f"uv-{version}.data/scripts/uv")
tmp = dest + ".part"
with open(tmp, "wb") as fh:
    fh.write(data)
os.chmod(tmp, 0o755)
os.replace(tmp, dest)
PY
  "$uv" --version >/dev/null 2>&1
}

if get_uv; then
  install() { "$uv" pip install --quiet --python "$python" "$@"; }
  offline() { [ -d "$wheels" ] && install --offline --no-index --find-links "$wheels" --compile-bytecode "${wanted[@]}"; }
else
  echo "install-python: uv $uv_version could not be had; installing with pip" >&2
  install() { fetch install "$@"; }
  offline() { [ -d "$wheels" ] && install --no-index --find-links "$wheels" "${wanted[@]}"; }
fi

if ! offline 2>/dev/null; then
  echo "install-python: fetching the wheels of .[$extras] into $wheels" >&2
  fetch wheel --wheel-dir "$wheels" "${wanted[@]}"
  offline
fi
# Editable as a path in a .pth file (setuptools' compat mode), not through the import hook of its default
# mode: that hook is consulted on every import of every Python started from the venv, and cost 65 ms a start
# (`python -c pass`: 137 ms against 71, median of 30). templates/ and hooks/ are then read where they are
# (bundled.py); a wheel still ships them inside the package.
install --no-index --no-build-isolation --no-deps -e "$top" --config-settings editable_mode=compat
# The package's own modules, compiled once here: every `git balanced` process (hooks, engines, the MCP
# server) then loads them compiled, even where PYTHONDONTWRITEBYTECODE keeps it from writing them itself.
"$python" -m compileall -q -j 0 "$top/git_balanced"
