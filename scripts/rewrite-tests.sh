#!/usr/bin/env bash
# Usage: scripts/rewrite-tests.sh VENV
#
# pytest rewrites the asserts of each test module it imports and keeps the result in the module's
# __pycache__, unless PYTHONDONTWRITEBYTECODE is set (as it is on some CI machines); then each of the test
# processes of `pytest -n 4` rewrites all of them again, 4.5 CPU seconds each on a clean clone. Here it is
# done once, by two processes (one per core) that each collect half of the test modules with the bytecode
# kept; the test processes then load what these wrote, whatever PYTHONDONTWRITEBYTECODE says. Nothing is
# done when every module's rewritten bytecode is newer than it. A module that fails to import is left for
# the real run to report.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-.venv}/bin"

mapfile -t files < <(find tests -name 'test_*.py' -not -path '*/__pycache__/*' | sort)
stale=()
for f in "${files[@]}"; do
    pyc=("$(dirname "$f")/__pycache__/$(basename "$f" .py)".*-pytest-*.pyc)
    [ -e "${pyc[0]}" ] && [ "${pyc[0]}" -nt "$f" ] || stale+=("$f")
done
[ "${#stale[@]}" -gt 0 ] || exit 0

halves=("" "")
for i in "${!stale[@]}"; do
    halves[$((i % 2))]+="${stale[$i]} "
done
for half in "${halves[@]}"; do
    [ -n "$half" ] || continue
    # shellcheck disable=SC2086  # a list of paths without spaces
    env -u PYTHONDONTWRITEBYTECODE "$BIN/pytest" --collect-only -q -p no:cacheprovider -p no:xdist \
        $half >/dev/null 2>&1 &
done
wait
exit 0
