"""A read-only view of the lead's repository for code the lead runs but did not write: a branch's own check and
setup. On Linux the command runs in a mount namespace of its own in which the lead's `.git` (refs, notes,
hooks, config, objects) and checkout are bound read-only, so a write there by any path fails; the mounts are
made in an outer user namespace and the command runs in an inner one, which locks them (it cannot unmount or
remount them), and it keeps the caller's user and group ids. Where namespaces are not allowed, `prefix`
returns None and the caller falls back to finding such writes after the command ends."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

# Runs in the outer namespace (as its root, which may bind and remount there), then enters the inner one with
# the caller's own ids. Exit 97 names a mount that failed.
_SCRIPT = """u=$1; g=$2; shift 2
while [ "$1" != "--" ]; do
  mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || { echo "cannot make $1 read-only" >&2; exit 97; }
  shift
done
shift
exec unshare --user --map-user="$u" --map-group="$g" --mount -- "$@"
"""


def _wrap(readonly: Sequence[Path], argv: Sequence[str]) -> list[str]:
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "sh", "-c", _SCRIPT, "fence", str(os.getuid()), str(os.getgid()), *map(str, readonly), "--", *argv]


def available() -> bool:
    """Whether this machine lets us make a folder read-only for one command (probed once per process);
    `GIT_BALANCED_NO_FENCE=1` turns it off, as on a machine without namespaces."""
    return not os.environ.get("GIT_BALANCED_NO_FENCE") and _probe()


@functools.cache
def _probe() -> bool:
    if not (shutil.which("unshare") and shutil.which("mount")):
        return False
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    try:
        # Passes only when the write is refused: a fence that lets it through is no fence.
        cp = subprocess.run(_wrap([probe], ["sh", "-c", '! touch "$0/.balanced-fence-probe-$$" 2>/dev/null',
                                            str(probe)]),
                            capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return cp.returncode == 0


def prefix_for(readonly: Sequence[Path], argv: Sequence[str], writable: Sequence[Path] = ()) -> list[str] | None:
    """`argv` run with the folders in `readonly` read-only, or None where this machine cannot fence. A folder
    that holds one of `writable` (where the command must write) is left out."""
    keep = [Path(w).resolve() for w in writable]
    folders = [p for p in dict.fromkeys(Path(x).resolve() for x in readonly)
               if p.is_dir() and not any(w.is_relative_to(p) for w in keep)]
    if not folders or not available():
        return None
    return _wrap(folders, argv)


def lead_readonly(common_dir: Path, root: Path, argv: Sequence[str], writable: Sequence[Path] = ()) -> list[str]:
    """`argv` with the lead's repository (its git folder and its checkout) read-only where this machine
    allows it, else `argv` as it is."""
    return prefix_for([common_dir, root], argv, writable) or list(argv)
