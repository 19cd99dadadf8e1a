"""`git balanced init`: the settings file (a known stack's commands when none are given), and the balanced
hooks: in pre-commit's config and installed by it, or as plain git hooks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import open_checkout
from git_balanced.settings import SETTINGS_PATH

if TYPE_CHECKING:
    from git_balanced.settings import WorktreeSettings

# (file that marks the stack, its name, its settings in templates/): the first one found is taken.
STACKS = (
    ("pyproject.toml", "Python", "settings/python.toml"),
    ("package.json", "Node.js", "settings/node.toml"),
    ("go.mod", "Go", "settings/go.toml"),
)


def init_command(*, check: str | None, setup: str | None, agent: str | None, hooks: str = "pre-commit") -> int:
    """Write the settings (never over existing ones), then install the hooks: through pre-commit (add them
    to its config, install it) or, with `hooks="git"`, as plain scripts in the hooks folder."""
    from git_balanced.settings import write_settings

    repo = open_checkout()
    target = repo.root / SETTINGS_PATH
    if target.exists():
        given = [f"--{n}" for n, v in (("check", check), ("setup", setup), ("agent", agent)) if v]
        if given:
            raise BalancedError(f"{SETTINGS_PATH} exists already, so {', '.join(given)} would be lost.",
                                hint=f"edit {SETTINGS_PATH} instead, or remove it and run init again.")
        ui.say(f"Kept {SETTINGS_PATH} as it is.")
    else:
        said, found = _stack(repo.root) if check is None else (None, None)
        if found is not None:
            check, setup = found.check, setup or found.setup
        write_settings(repo.root, check=check, setup=setup, agent=agent)
        if said is None:
            ui.say(f"Wrote {SETTINGS_PATH}.")
        else:
            ui.say(f"Wrote {SETTINGS_PATH} with {said}:\n  setup: {setup or '(none)'}\n  check: {check}")
    if hooks == "git":
        return _plain_hooks(repo)
    from git_balanced.hooks.precommit import add_balanced_hooks, hooks_starting_at, install_hooks

    starting = hooks_starting_at(repo.root)
    changed = add_balanced_hooks(repo.root)
    ui.say("Added the balanced hooks to .pre-commit-config.yaml." if changed
           else ".pre-commit-config.yaml has the balanced hooks already.")
    install_hooks(repo.root)
    ui.say("Installed the pre-merge-commit and pre-push hooks.")
    for hook_id, kinds in starting.items():
        ui.say(f"Your hook {hook_id} will run at {' and '.join(kinds)} from now on, as its stages in "
               ".pre-commit-config.yaml name it; take it out of them there if it should not.")
    ui.say("Next: commit .magnum/ and .pre-commit-config.yaml, then `git balanced allow` to approve the "
           "setup and check commands.")
    return 0


def _stack(root: Path) -> tuple[str | None, WorktreeSettings | None]:
    """Words saying which known stack is at `root` and why, and its settings; (None, None) for none."""
    from git_balanced.bundled import template_text
    from git_balanced.settings import load_settings_text

    found = [(marker, name, path) for marker, name, path in STACKS if (root / marker).is_file()]
    if not found:
        return None, None
    marker, name, path = found[0]
    worktree = load_settings_text(template_text(path), f"templates/{path}").worktree
    why = f"as {marker} is here" if len(found) == 1 else \
        f"as {' and '.join(m for m, _, _ in found)} are here, and {marker} comes first"
    return f"the {name} setup and check (from templates/{path}, {why})", worktree


def _plain_hooks(repo: Repo) -> int:
    from git_balanced.hooks.plain import hooks_dir, install_plain_hooks

    where, hooks_path = hooks_dir(repo)
    written = install_plain_hooks(where)
    shown = _shown(where, repo.root)
    named = f"{shown} (core.hooksPath)" if hooks_path else shown
    if written:
        ui.say(f"Installed the {' and '.join(written)} hook{'s' if len(written) > 1 else ''} in {named}.")
    else:
        ui.say(f"{named} has the balanced hooks already.")
    inside = where.is_relative_to(repo.root) and not where.is_relative_to(repo.common_dir)
    also = f" and {shown}/" if inside else ""
    ui.say(f"Next: commit .magnum/{also}, then `git balanced allow` to approve the setup and check commands.")
    return 0


def _shown(path: Path, root: Path) -> str:
    """`path` relative to the repository's top when it is inside, else as it is."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
