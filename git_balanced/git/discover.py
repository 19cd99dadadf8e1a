"""Finding the checkout that holds a folder as git finds it, without starting git where that is plain."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # pathlib and re are imported where they are used: a hook finds its checkout without them
if TYPE_CHECKING:
    from pathlib import Path

# A config line that moves the working tree, makes the repository bare, or brings in other config files.
MOVES_TREE = r"^[ \t]*(?:worktree[ \t]*=|bare[ \t]*=[ \t]*(?!false|no|off|0)\w)|^[ \t]*\[[ \t]*include"
_BLANKS = " \t"
_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")  # \w, of ASCII lowercased text


def moves_tree(config: str) -> bool:
    """Whether a line of the config text matches MOVES_TREE (case aside, as git reads its keys): read line by line
    where the text is ASCII, else by the pattern itself (re, IGNORECASE and MULTILINE)."""
    if not config.isascii():
        import re

        return re.search(MOVES_TREE, config, re.IGNORECASE | re.MULTILINE) is not None
    for line in config.lower().split("\n"):
        text = line.lstrip(_BLANKS)
        if text.startswith("[") and text[1:].lstrip(_BLANKS).startswith("include"):
            return True
        if text.startswith("worktree") and text[8:].lstrip(_BLANKS).startswith("="):
            return True
        if text.startswith("bare") and text[4:].lstrip(_BLANKS).startswith("="):
            value = text[4:].lstrip(_BLANKS)[1:].lstrip(_BLANKS)
            if value[:1] in _WORD and not value.startswith(("false", "no", "off", "0")):
                return True
    return False


def _common_dir(git_dir: str) -> str | None:
    """The common git folder of `git_dir`: the one its `commondir` file names (a linked worktree's), or itself;
    None when that file cannot be read."""
    try:
        with open(f"{git_dir}/commondir", encoding="utf-8") as fh:
            return os.path.realpath(os.path.join(git_dir, fh.readline().strip()))
    except FileNotFoundError:
        return git_dir
    except (OSError, UnicodeDecodeError):
        return None


def _is_git_dir(path: str) -> bool:
    """Whether `path` is a git folder as git judges one: a HEAD of its own, and objects and refs in its common
    folder."""
    common = _common_dir(path)
    return common is not None and os.path.isfile(f"{path}/HEAD") and os.path.isdir(f"{common}/refs") and \
        os.path.isdir(f"{common}/objects")


def found_in_process(where: Path) -> tuple[Path, Path, Path] | None:
    """The working tree, git folder and common git folder of the checkout holding `where`, found as git finds
    them (`git rev-parse --show-toplevel --git-dir --git-common-dir`) without starting it: up from `where` to
    the first `.git`, a folder or a file naming one (a linked worktree, a submodule). None where git should
    answer: a bare repository or a git folder on the way, a `.git` git would not take, another file system, a
    folder or `.git` owned by another user (git's safe.directory), or a config that moves the working tree."""
    found = found_paths(str(where))
    if found is None:
        return None
    from pathlib import Path

    return Path(found[0]), Path(found[1]), Path(found[2])


def found_paths(where: str) -> tuple[str, str, str] | None:
    """found_in_process, as strings: the working tree, git folder and common git folder holding `where`."""
    try:
        here = os.path.realpath(where)
        uid, device = os.geteuid(), os.stat(here).st_dev
    except OSError:
        return None
    while True:
        dotgit = f"{here}/.git"
        try:
            st = os.stat(dotgit)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None:
            if st.st_uid != uid or os.stat(here).st_uid != uid:
                return None
            if os.path.isdir(dotgit):
                git_dir = dotgit
            else:
                try:
                    with open(dotgit, encoding="utf-8") as fh:
                        line = fh.readline().strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not line.startswith("gitdir: "):
                    return None
                git_dir = os.path.realpath(os.path.join(here, line[len("gitdir: "):]))
            common = _common_dir(git_dir)
            if common is None or not _is_git_dir(git_dir) or os.path.exists(f"{git_dir}/config.worktree"):
                return None
            try:
                with open(f"{common}/config", encoding="utf-8") as fh:
                    if moves_tree(fh.read()):
                        return None
            except FileNotFoundError:
                pass
            except (OSError, UnicodeDecodeError):
                return None
            return here, git_dir, common
        if _is_git_dir(here):
            return None  # inside a git folder, or a bare repository: git says what that is
        parent = os.path.dirname(here)
        if parent == here:
            return None
        try:
            if os.stat(parent).st_dev != device:
                return None
        except OSError:
            return None
        here = parent
