"""The lead: the checkout where `git balanced` runs, its branch, and the settings it goes by."""

from __future__ import annotations

import os

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.git import OBJECT_ID, Repo

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from git_balanced.settings import Settings
    from git_balanced.trust import Commands
else:
    from git_balanced.typed import NamedTuple


class Lead(NamedTuple):
    """A repository and the branch its work lands in (a NamedTuple: the board starts without `dataclasses`)."""

    repo: Repo
    branch: str

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"

    @property
    def wake_path(self) -> str:
        return str(self.repo.state_dir / "engine.wake")

    def wake_engine(self) -> None:
        """Tell a sleeping engine to look again now (commands that add work call this)."""
        with open(self.wake_path, "a"):
            os.utime(self.wake_path)


def open_checkout(cwd: str | None = None) -> Repo:
    """The repository of the current folder, which must have a working tree (settings live in it)."""
    repo = Repo.discover(cwd)
    if repo.bare:
        raise BalancedError(f"{repo.root} is a bare repository: it has no working tree for .magnum/ to live in.",
                            hint="run git balanced in a clone with a checkout: `git clone BARE DIR`.")
    return repo


def open_lead(cwd: str | None = None) -> Lead:
    """The lead of the current folder; refuses a detached HEAD or a worker's branch."""
    repo = Repo.discover(cwd)
    if repo.bare:
        raise BalancedError(f"{repo.root} is a bare repository.", hint="run git balanced in a checkout.")
    branch = repo.current_branch()
    if branch is None:
        raise BalancedError("HEAD is detached, so there is no lead's branch to land in.",
                            hint="switch to your branch first: `git switch main`.")
    return Lead(repo, branch)


class _Committed(process.Bounded[tuple[str, str], str | None]):
    """The settings file's text as committed, by repository and commit, for this process: a commit never
    changes, so a command that asks at a dozen call sites reads it from git once, and a branch that moved, being
    at another commit, is read again. The few newest are kept."""

    __slots__ = ()
    KEEP = 16

    def text(self, repo: Repo, commit: str, path: str) -> str | None:
        return self.made((repo.identity, commit), lambda: repo.show_file(commit, path))


def _commit_of(repo: Repo, rev: str) -> str | None:
    """The commit `rev` names when it is a full id, a branch, a full ref name or the checked-out branch's HEAD
    (read in-process), else None (git is asked for the file at `rev` itself)."""
    if OBJECT_ID.fullmatch(rev):
        return rev
    if rev == "HEAD":
        rev = repo.current_branch() or ""
        if not rev:
            return None
    return repo.read_ref(rev if rev.startswith("refs/") else f"refs/heads/{rev}")


def settings_at(repo: Repo, rev: str | None) -> Settings:
    """Settings as committed at `rev` (the lead decides landings by what it committed), or as in the
    working tree when `rev` is None or has no settings file yet. Read from git once per commit (_Committed),
    and checked by the models once per file (settings_view.py)."""
    from typing import cast  # here: the board and the inbox read no settings

    from git_balanced.settings_view import SETTINGS_PATH, committed

    if rev is not None:
        commit = _commit_of(repo, rev)
        text = repo.show_file(rev, SETTINGS_PATH) if commit is None else \
            process.part(_Committed).text(repo, commit, SETTINGS_PATH)
        if text is not None:  # checked once, then read back without the models (settings_view.py)
            # Read as Settings is: the same keys, frozen.
            return cast("Settings", committed(repo, text, lambda: _checked(text, f"{SETTINGS_PATH} at {rev}")))
    from git_balanced.settings import plain, read_settings_file

    settings, file_text = read_settings_file(repo.root)
    if file_text is not None:
        # Its checked reading kept, named by the text's blob id (settings_view.py): the same text read as
        # committed later (the first `plan` after `allow`) is read back, not checked by the models again.
        committed(repo, file_text, lambda: plain(settings))
    return settings


def _checked(text: str, source_name: str) -> dict[str, Any]:
    """`text` checked by the settings' models, as plain JSON (settings_view.py keeps it)."""
    from git_balanced.settings import load_settings_text, plain

    return plain(load_settings_text(text, source_name))


def commands_of(settings: Settings) -> Commands:
    from git_balanced.trust import Commands  # here: the board and the inbox read no approvals

    return Commands(setup=settings.worktree.setup, check=settings.worktree.check)
