"""Protected paths (DESIGN §6.4): what decides landing, or runs as the lead's own code when it checks.

A branch that changes one is held for you, not landed: `.magnum/`, the hooks' configuration, the lead's agents'
own project files (what a lead's agent runs and reads as its instructions, unfenced, in the lead's checkout), a
file the setup or check command names, and what `[worktree] protect` lists. The rules come from the lead's committed
settings, never from the branch being landed, so a branch cannot unprotect what it changes. A file or a
change past the size limit (sizes.py) is held the same way.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_balanced.git import Repo, TreeChange
from git_balanced.landing.sizes import Limits, limits
from git_balanced.shipped.guard import matches

if TYPE_CHECKING:
    from git_balanced.settings import Settings

SETTINGS_DIR = ".magnum/"
HOOKS_CONFIG = ".pre-commit-config.yaml"
# What the lead's own agent runs or obeys, in the lead's checkout and outside the fence, once a landing puts it
# there: its hooks, the MCP servers it starts (a headless `claude -p` approves a project's on its own), its
# extensions, and the instructions it reads as its own (AGENT-FACTS.md: where each agent finds them).
AGENT_FOLDERS = {".claude/": "Claude Code's project settings: hooks, servers and skills a lead's agent runs",
                 ".codex/": "Codex's project settings: hooks and servers a lead's agent runs",
                 ".pi/": "Pi's project extensions and prompt: code a lead's agent runs"}
_OBEYED = "the instructions a lead's agent reads"
AGENT_FILES = {".mcp.json": "the MCP servers a lead's agent starts", "AGENTS.md": _OBEYED,
               "AGENTS.override.md": _OBEYED, "CLAUDE.md": _OBEYED, "CLAUDE.local.md": _OBEYED}
# Runners whose recipe lives in a file of the repository: `make check` runs what the Makefile says, so
# rewriting that file rewrites the check as surely as rewriting `check.sh` does.
RECIPES = {
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "just": ("justfile", "Justfile", ".justfile"),
    "npm": ("package.json",), "pnpm": ("package.json",), "yarn": ("package.json",),
    "tox": ("tox.ini",),
    "nox": ("noxfile.py",),
}
# Shell words that are never paths: operators and redirections split off by shlex.
_OPERATORS = set("&|;()<>")
SHOWN = 5


@dataclass(frozen=True)
class Rules:
    """What is protected at the lead's tip, each with the words that say why."""

    named: dict[str, str] = field(default_factory=dict)  # exact path -> why
    folders: dict[str, str] = field(default_factory=dict)  # `folder/` -> why
    globs: tuple[str, ...] = ()
    sizes: Limits | None = None  # the size limit (sizes.py): a file or a change past it is held the same way

    def why(self, path: str) -> str | None:
        """Why `path` is protected, or None when it is not."""
        if path in self.named:
            return self.named[path]
        for folder, why in self.folders.items():
            if path.startswith(folder):
                return why
        hit = next((g for g in self.globs if matches(path, [g])), None)
        return f"matched by `protect` {hit}" if hit else None

    def touched(self, paths: list[str]) -> dict[str, str]:
        """The protected paths among `paths`, each with why, in their order."""
        return {p: w for p in paths if (w := self.why(p)) is not None}

    def held(self, repo: Repo, changes: list[TreeChange]) -> dict[str, str]:
        """What holds a change (its files, `changes`, from the branch's merge base) for you: its protected
        paths, then files past the size limit, each with why. One diff for both: the paths, and the blobs whose
        sizes count."""
        out = self.touched([c.path for c in changes])
        for path, why in (self.sizes.over(repo, changes) if self.sizes else {}).items():
            out[path] = f"{out[path]}; {why}" if path in out else why
        return out


def rules(repo: Repo, settings: Settings, tip: str) -> Rules:
    """The protected paths of the lead at `tip`, from its committed `settings` and its hooks folder."""
    folders = {SETTINGS_DIR: "git balanced's settings", **AGENT_FOLDERS}
    hooks = _tracked_hooks_folder(repo)
    if hooks:
        folders[hooks] = "the git hooks (core.hooksPath)"
    named = {HOOKS_CONFIG: "the hooks' configuration", **AGENT_FILES}
    for which, cmd in (("setup", settings.worktree.setup), ("check", settings.worktree.check)):
        # Only files the lead has: `test -f ok.txt` names a file a branch may rightly add.
        for path in _tracked(repo, tip, command_files(cmd or "")):
            named.setdefault(path, f"named by the {which} command")
    return Rules(named, folders, tuple(settings.worktree.protect), limits(settings))


def command_files(cmd: str, depth: int = 0) -> list[str]:
    """Every word of a shell command line that could be a path inside the repository (relative, no `..`),
    and the recipe file of a runner such as `make`. A word holding spaces (`sh -c "sh check.sh"`) is read
    as a command line again."""
    words = _words(cmd)
    out: list[str] = []
    first = True
    for w in words:
        if w and set(w) <= _OPERATORS:
            first = True
            continue
        if first and "=" in w and not w.startswith("-") and w.split("=", 1)[0].isidentifier():
            continue  # `VAR=value cmd`: still before the command word
        if first and os.path.basename(w) in RECIPES:
            out.extend(RECIPES[os.path.basename(w)])
        first = False
        value = w.split("=", 1)[1] if w.startswith("-") and "=" in w else w
        if any(c.isspace() for c in value) and depth < 2:
            out.extend(command_files(value, depth + 1))
            continue
        path = _as_path(value)
        if path:
            out.append(path)
    return list(dict.fromkeys(out))


def _tracked(repo: Repo, tip: str, paths: list[str]) -> list[str]:
    """Those of `paths` that are files in the tree of `tip`."""
    return repo.files_in(tip, paths)


def _words(cmd: str) -> list[str]:
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        return list(lex)
    except ValueError:  # an unclosed quote: the shell would refuse it too; take the plain words
        return cmd.split()


def _as_path(word: str) -> str | None:
    p = word
    while p.startswith("./"):
        p = p[2:]
    if not p or p.startswith(("/", "-", "~", "$")) or "\0" in p:
        return None
    norm = os.path.normpath(p)
    if norm == "." or norm.startswith(".."):
        return None
    return norm.replace(os.sep, "/")


def _tracked_hooks_folder(repo: Repo) -> str | None:
    """core.hooksPath as a folder of the working tree (`.githooks/`), when the hooks live there, committed."""
    value = repo.config_value("core.hooksPath")
    if not value:
        return None
    where = os.path.realpath(os.path.join(repo.root, os.path.expanduser(value)))
    root = os.path.realpath(repo.root)
    rel = os.path.relpath(where, root)
    if rel == "." or rel.startswith(".."):
        return None
    common = os.path.realpath(repo.common_dir)
    if where == common or where.startswith(common + os.sep):
        return None
    return rel.replace(os.sep, "/").rstrip("/") + "/"


def words(touched: dict[str, str]) -> str:
    """`check.sh (named by the check command) and tests/a.py (matched by `protect` tests/**)`, the first few."""
    items = [f"{p} ({why})" for p, why in touched.items()]
    shown = items[:SHOWN]
    more = len(items) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
