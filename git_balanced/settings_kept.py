"""Where committed settings, once checked by the models (settings.py), are kept for readers that would rather not
check them again: `.git/balanced/cache/settings/`, under one fingerprint of the models as installed. The engine
and the commands keep each settings file's checked values there (settings_view.py); the pre-push hook keeps the
check command each settings file names (hooks/prepush.py). A file under another fingerprint is never read, so a
changed model checks every settings file again. Stdlib `os` only: the pre-push hook imports it on every push."""

from __future__ import annotations

import os

FOLDER = "cache/settings"  # under .git/balanced/
_MODELS = ("settings.py", "models.py", "settings_view.py")  # the files whose change makes a kept reading stale


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

