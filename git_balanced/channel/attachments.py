"""What a lead may attach to a row under Now, and the blobs that hold it.

A row is shared by `git balanced sync`, so whatever is attached is pushed. A lead that is told to attach
`~/.ssh/id_ed25519` must not be able to: a file comes from the repository's working tree (one git does not
ignore, outside git's own folder) or from a folder `[balanced] attach_from` names, judged after symlinks and
`..` are resolved, and the files are small, each and all together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead, settings_at
from git_balanced.settings_view import SETTINGS_PATH
from git_balanced.state.events import MODE_FILE

MOST_BYTES = 20 * 1024 * 1024  # an attachment is a screenshot or a log, not a build; all of a row's together too
MOST_FILES = 20


@dataclass(frozen=True)
class Places:
    """Where attachments may come from, as real paths, and the words that name them."""

    tree: str
    folders: dict[str, str]  # real path -> as the settings name it

    def words(self) -> str:
        named = ", ".join(self.folders.values()) if self.folders else "none yet"
        return (f"the repository's working tree {self.tree} (files git does not ignore, outside .git) or a "
                f"folder `[balanced] attach_from` names ({named})")


def places(lead: Lead) -> Places:
    """The working tree and the folders the lead's committed settings name, each resolved."""
    repo = lead.repo
    settings = settings_at(repo, repo.rev_parse(lead.ref))
    root = os.path.realpath(repo.root)
    folders = {os.path.realpath(os.path.join(root, os.path.expanduser(f))): f for f in settings.balanced.attach_from}
    return Places(root, folders)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _why_not(repo: Repo, real: str, where: Places) -> str | None:
    """Why the file at `real` (resolved) may not be attached, or None when it may."""
    if any(_inside(real, f) for f in where.folders):
        return None
    if not _inside(real, where.tree):
        return "outside"
    for own in {os.path.realpath(repo.git_dir), os.path.realpath(repo.common_dir)}:
        if _inside(real, own):
            return "inside git's own folder"
    if repo.is_ignored(os.path.relpath(real, where.tree)):
        return "a file git ignores (where secrets such as .env live)"
    return None


def _refuse(shown: str, why: str, where: Places) -> BalancedError:
    said = (f"The attachment {shown} is not in a place attachments come from: {where.words()}." if why == "outside"
            else f"The attachment {shown} is {why}; attachments come only from {where.words()}.")
    return BalancedError(said,
                         hint=f"attach a file from there, or name its folder in `[balanced] attach_from` in "
                              f"{SETTINGS_PATH} and commit it.")


def _read(raw: str, real: str, room: int) -> bytes:
    """The file's bytes, refused past `room`; read with a bound, as it may grow after it was measured."""
    size = os.stat(real).st_size
    if size <= room:
        with open(real, "rb") as fh:
            data = fh.read(room + 1)
        if len(data) <= room:
            return data
        size = len(data)
    raise BalancedError(f"The attachment {raw} has {size} bytes; at most {MOST_BYTES} bytes fit a row, all its "
                        f"attachments together.", hint="attach a smaller file (a screenshot, a log's tail).")


def judged(lead: Lead, paths: list[str] | tuple[str, ...]) -> list[tuple[str, Path, str]]:
    """Each path as (as given, as found, resolved), refused unless it may be attached: before any check runs."""
    repo = lead.repo
    if len(paths) > MOST_FILES:
        raise BalancedError(f"{len(paths)} attachments are too many; at most {MOST_FILES} fit a row.",
                            hint="attach the few files that show the work.")
    where = places(lead) if paths else None
    out = []
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.is_absolute() and not p.exists():
            p = repo.root / p
        real = os.path.realpath(p)  # symlinks and `..` resolved before judging
        if not os.path.isfile(real):
            raise BalancedError(f"The attachment {raw} is not a file here.",
                                hint="name files that exist, relative to the repository or absolute.")
        assert where is not None
        why = _why_not(repo, real, where)
        if why:
            given = str(p if p.is_absolute() else Path.cwd() / p)
            raise _refuse(raw if given == real else f"{raw} (that is {real})", why, where)
        if os.stat(real).st_size > MOST_BYTES:
            _read(raw, real, MOST_BYTES)  # refuses, naming the size
        out.append((raw, p, real))
    return out


Entry = tuple[str, int, str]  # a tree entry: name, mode, blob


def entries(lead: Lead, paths: list[str] | tuple[str, ...]) -> tuple[list[dict[str, Any]], list[Entry]]:
    """Each file judged, read and written as a blob: the row's records of them and their tree entries."""
    found: list[dict[str, Any]] = []
    items: list[Entry] = []
    room = MOST_BYTES
    for raw, p, real in judged(lead, paths):
        data = _read(raw, real, room)
        room -= len(data)
        name, n = p.name, 2
        while any(e[0] == name for e in items):  # two files of one name keep both
            name = f"{p.stem}-{n}{p.suffix}"
            n += 1
        blob = lead.repo.write_blob(data)
        items.append((name, MODE_FILE, blob))
        found.append({"name": name, "blob": blob, "bytes": len(data), "path": real})
    return found, items
