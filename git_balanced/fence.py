"""A read-only view of the lead's repository for code the lead runs but did not write: a branch's own check and
setup. On Linux the command runs in a mount namespace of its own in which the lead's `.git` (refs, notes,
hooks, config, objects) and checkout are bound read-only, so a write there by any path fails; the mounts are
made in an outer user namespace and the command runs in an inner one, which locks them (it cannot unmount or
remount them), and it keeps the caller's user and group ids. Where namespaces are not allowed, `prefix`
returns None and the caller falls back to finding such writes after the command ends; `why_unavailable`
says why, in words a person can act on."""

from __future__ import annotations

import os
import time
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from pathlib import Path

from git_balanced import process

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Sequence

# Runs in the outer namespace (as its root, which may bind and remount there), then enters the inner one with
# the caller's own ids. Exit 97 names a mount that failed. `--rbind`, not `--bind`: in a user namespace the
# kernel refuses a plain bind of a folder with a mount under it (a tmpfs under $TMPDIR, say), as that would
# uncover what the mount hides; the folder's own mount is made read-only, a mount under it keeps its own mode.
# The working folder is entered again by its name, through the new mounts: as inherited it is the folder as it
# was before them, and writable.
_SCRIPT = """u=$1; g=$2; shift 2
while [ "$1" != "--" ]; do
  mount --rbind "$1" "$1" && mount -o remount,bind,ro "$1" || { echo "cannot make $1 read-only" >&2; exit 97; }
  shift
done
shift
cd "$(pwd -P)" || exit 97
exec unshare --user --map-user="$u" --map-group="$g" --mount -- "$@"
"""


def _wrap(readonly: Sequence[Path], argv: Sequence[str]) -> list[str]:
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "sh", "-c", _SCRIPT, "fence", str(os.getuid()), str(os.getgid()), *map(str, readonly), "--", *argv]


def available() -> bool:
    """Whether this machine lets us make a folder read-only for one command (probed once per process);
    `GIT_BALANCED_NO_FENCE=1` turns it off, as on a machine without namespaces."""
    return why_unavailable() is None


def switched_off() -> bool:
    """Whether `GIT_BALANCED_NO_FENCE` asks for no fence, here and on the machines this lead starts workers on."""
    return bool(os.environ.get("GIT_BALANCED_NO_FENCE"))


def why_unavailable() -> str | None:
    """None where the fence works here; otherwise why not, in a sentence (for check, board, doctor, engine)."""
    if switched_off():
        return "GIT_BALANCED_NO_FENCE is set, which turns the fence off"
    return process.part(_Probed).answer()


class _Probed:
    """This process's answer of the probe (None: the fence works), made on first ask: it starts processes."""

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._done = False
        self._answer: str | None = None

    def answer(self) -> str | None:
        with self._lock:
            if not self._done:
                self._answer, self._done = _probe(), True
            return self._answer


def _probe() -> str | None:
    import shutil  # here, not above: the board reads the remembered answer and probes nothing
    import subprocess

    missing = [tool for tool in ("unshare", "mount") if not shutil.which(tool)]
    if missing:
        return f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not on PATH (util-linux has them)"
    # A folder of the probe's own, made now: nothing is mounted under it, so the answer does not depend on
    # what this machine mounted where (a tmpfs under $TMPDIR once turned the fence off without a word).
    import tempfile  # only a probe makes a folder

    try:
        probe = tempfile.mkdtemp(prefix="balanced-fence-probe-")
    except OSError as exc:
        return f"the probe could not make a folder to try the fence on: {exc}"
    try:
        # Passes only when the write is refused: a fence that lets it through is no fence.
        cp = subprocess.run(_wrap([Path(probe)], ["sh", "-c", '! touch "$0/written" 2>/dev/null', probe]),
                            capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "the probe of the fence (unshare and mount) did not end within 10 s"
    except OSError as exc:
        return f"unshare could not be run: {exc}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if cp.returncode == 0:
        return None
    said = cp.stderr.decode("utf-8", "replace").strip().splitlines()
    if cp.returncode == 1 and not said:
        return "a folder made read-only in a mount namespace could still be written"
    return ("this machine refuses user or mount namespaces"
            + (f" ({said[-1][:300]})" if said else f" (unshare exited {cp.returncode})"))


UNFENCED_HINT = ("`unshare --user --map-root-user --mount true` shows this machine's own answer; "
                 "docs/safety/untrusted.md says what running unfenced allows")


def unfenced_words() -> str | None:
    """What a person is told, once, where workers and checks cannot be fenced here (None where they are): why
    not, what that allows, and what git balanced does about it."""
    return unfenced_words_for(why_unavailable())


def unfenced_words_for(why: str | None) -> str | None:
    """unfenced_words, for an answer of the probe already had (`why`, as why_unavailable says it)."""
    if why is None:
        return None
    return (f"Workers and checks on this machine are not fenced: {why}. They run as you with nothing read-only, "
            "so a worker's or a check's code can write your repository's .git (your branch, your check results) "
            "and your settings. So here a landing counts only a check its own process ran, never a recorded "
            "result.")


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


# -- the probe's answer remembered, for what only shows it (the board) ------------------------------------
REMEMBERED_FOR = 3600.0  # seconds a probe's answer is shown again without probing


def _this_boot() -> str:
    """What changes when this machine starts again (and with it what it allows): the kernel's boot id."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def remembered_why_unavailable(kept: Path) -> str | None:
    """why_unavailable, for a display: the answer kept in the file `kept` when a probe made it less than
    REMEMBERED_FOR seconds ago, since this machine started, for this user and PATH; else probed now and kept
    there. Only what shows the fence reads this: every command that fences something probes in its own process.
    """
    if switched_off():
        return why_unavailable()
    from git_balanced.files import loads, write_json  # json.loads' answer, without importing json (and re)

    key = {"boot": _this_boot(), "uid": os.getuid(), "path": os.environ.get("PATH", "")}
    try:
        with open(kept, encoding="utf-8") as fh:
            rec = loads(fh.read())
        fresh = isinstance(rec, dict) and all(rec.get(k) == v for k, v in key.items()) and \
            isinstance(rec.get("at"), float) and 0 <= time.time() - rec["at"] < REMEMBERED_FOR and \
            (rec.get("why") is None or isinstance(rec.get("why"), str))
    except (OSError, ValueError):
        fresh = False
    if fresh:
        return rec["why"]  # type: ignore[no-any-return]
    why = why_unavailable()
    try:
        write_json(kept, {**key, "at": time.time(), "why": why})
    except OSError:
        pass  # not kept: the next look probes again
    return why
