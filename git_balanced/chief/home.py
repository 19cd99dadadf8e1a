"""The chief's folder, `$XDG_DATA_HOME/git-balanced/chief/` (`~/.local/share/git-balanced/chief/`): a git
repository made on first use, whose refs keep the chief's state, as every other state here is kept."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced.files import Flock
from git_balanced.git import Repo

REFS = "refs/balanced/chief/"


def folder() -> Path:
    """Where the chief's folder is: under XDG_DATA_HOME, or ~/.local/share when it is not set."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "git-balanced" / "chief"


def repo() -> Repo:
    """The chief's repository, made when it is not there yet (by one process, however many ask at once)."""
    where = folder()
    if (where / ".git").is_dir():
        return Repo.discover(where)
    where.parent.mkdir(parents=True, exist_ok=True)
    with Flock(where.parent / "chief.lock"):
        if not (where / ".git").is_dir():
            Repo.create(where)
    return Repo.discover(where)


def ref(name: str) -> str:
    """The full name of one of the chief's refs: `refs/balanced/chief/<name>`."""
    return REFS + name
