"""Where committed settings, once checked by the models (settings.py), are kept for readers that would rather not
check them again: `.git/balanced/cache/settings/`, under one fingerprint of the models as installed. The engine
and the commands keep each settings file's checked values there (settings_view.py); the pre-push hook keeps the
check command each settings file names (hooks/prepush.py). A file under another fingerprint is never read, so a
changed model checks every settings file again. The folder keeps the KEEP settings files written last (`prune`,
as one is written): a settings file changed a thousand times leaves KEEP readings, not a thousand. Stdlib `os`
only: the pre-push hook imports it on every push."""

from __future__ import annotations

import os

FOLDER = "cache/settings"  # under .git/balanced/
_MODELS = ("settings.py", "models.py", "settings_view.py")  # the files whose change makes a kept reading stale
_HEX = frozenset("0123456789abcdef")
KEEP = 64  # kept readings (one a settings blob and fingerprint); the oldest written go first


def fingerprint() -> str:
    """The installed models' fingerprint: the package's version and each model file's time and size."""
    import git_balanced

    here = os.path.dirname(os.path.abspath(git_balanced.__file__))
    parts = [git_balanced.__version__]
    for name in _MODELS:
        try:
            st = os.stat(os.path.join(here, name))
        except OSError:  # installed without its sources: its version alone tells one model from another
            continue
        parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return " ".join(parts)


def folder(state_dir: str | os.PathLike[str]) -> str:
    """The folder the kept settings live in, for the lead whose `.git/balanced` is `state_dir`."""
    return os.path.join(os.fspath(state_dir), FOLDER)



def prune(state_dir: str | os.PathLike[str], keep: int | None = None) -> int:
    """Remove the kept readings (`<blob>-<fingerprint>.json`) beyond the `keep` (default KEEP) written last; how
    many went. Other files there (the pre-push hook's) are left as they are."""
    keep = KEEP if keep is None else keep
    where = folder(state_dir)
    try:
        names = [n for n in os.listdir(where) if _a_reading(n)]
    except OSError:
        return 0
    if len(names) <= keep:
        return 0
    dated = []
    for name in names:
        try:
            dated.append((os.stat(os.path.join(where, name)).st_mtime_ns, name))
        except OSError:  # another process pruned it meanwhile
            continue
    gone = 0
    for _, name in sorted(dated)[:max(0, len(dated) - keep)]:
        try:
            os.unlink(os.path.join(where, name))
            gone += 1
        except OSError:
            pass
    return gone


def _a_reading(name: str) -> bool:
    """Whether `name` is a kept reading's: 40 hex digits (64 in a sha256 repository), `-`, 12, `.json`."""
    stem, ext = os.path.splitext(name)
    blob, _, stamp = stem.partition("-")
    return ext == ".json" and len(blob) in (40, 64) and len(stamp) == 12 and all(c in _HEX for c in blob + stamp)
