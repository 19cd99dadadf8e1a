"""`git init -q --template=` for the many repositories of one folder (the workers' copies, one a branch): git makes
the first, and the next ones are laid out as git laid out that one (its folders, HEAD and config, nothing else),
where each `git init` was a process of its own. Kept per folder in this process only (process.py): a folder on
another disk, or a git config that changes, is met by git again in the next process."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced import proc, process
from git_balanced.git.run import config_text, run_git, write_config

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Mapping

Layout = tuple[tuple[str, "bytes | None"], ...]  # each path under `.git`, and its bytes (None: a folder)
FILES = frozenset({"HEAD", "config"})  # all a repository made without a template holds, besides its folders


class _Laid(process.Bounded[str, "Layout | None"]):
    """What git laid out for the first repository made in a folder, by folder (None: lay none out by hand)."""

    KEEP = 8


def init(where: Path, cwd: Path, config: Mapping[str, str] | None = None) -> proc.Result | None:
    """Make the empty repository `where` (not bare, no template), with these `section.key` values set in its config
    (a laid-out one has them in its config as it is first written, not in a second write); None when made, else
    git's result."""
    laid = process.part(_Laid)
    layout = laid.get(str(where.parent))
    if layout is not None:
        _lay(where / ".git", layout, config or {})
        return None
    res = run_git(["init", "-q", "--template=", str(where)], cwd=cwd)
    if res.code != 0:
        return res
    laid.put(str(where.parent), _layout(where / ".git"))
    if config:
        write_config(where / ".git" / "config", config)
    return None


def _layout(git_dir: Path) -> Layout | None:
    """The folders and files git made in `git_dir`; None when it is more than folders, HEAD and a config that
    sets no shared permissions (git would set those modes on every file it writes)."""
    found: list[tuple[str, bytes | None]] = []
    for top, dirs, files in os.walk(git_dir):
        rel = os.path.relpath(top, git_dir)
        for d in sorted(dirs):
            if os.path.islink(os.path.join(top, d)):
                return None
            found.append((os.path.normpath(os.path.join(rel, d)), None))
        for f in files:
            name = os.path.normpath(os.path.join(rel, f))
            if name not in FILES or os.path.islink(os.path.join(top, f)):
                return None
            found.append((name, Path(top, f).read_bytes()))
    config = dict(found).get("config") or b""
    if b"sharedrepository" in config.lower() or set(FILES) - {n for n, _ in found}:
        return None
    return tuple(sorted(found, key=lambda item: (item[1] is not None, item[0])))  # the folders first


def _lay(git_dir: Path, layout: Layout, config: Mapping[str, str]) -> None:
    """Make `git_dir` hold what `layout` names, as git would (modes from the umask), its config with `config` set."""
    git_dir.mkdir(parents=True)
    for name, data in layout:
        if data is None:
            (git_dir / name).mkdir(parents=True, exist_ok=True)
        elif name == "config" and config:
            (git_dir / name).write_text(config_text(data.decode(), config), encoding="utf-8")
        else:
            (git_dir / name).write_bytes(data)
