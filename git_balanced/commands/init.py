"""`git balanced init`: the settings file (a known stack's commands when none are given), and the balanced
hooks: in pre-commit's config and installed by it, or as plain git hooks."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_balanced import files, ui
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


def init_command(*, check: str | None, setup: str | None, agent: str | None, hooks: str = "pre-commit",
                 project: bool = False) -> int:
    """Write the settings (or set the keys given in existing ones), then install the hooks: through pre-commit
    (add them to its config, install it) or, with `hooks="git"`, as plain scripts in the hooks folder. Then
    add the repository to the chief's projects (`project`), or offer to when the person has a chief's folder."""
    code = _init(check=check, setup=setup, agent=agent, hooks=hooks)
    _project_offer(open_checkout().root, add=project)
    return code


def _project_offer(root: Path, *, add: bool) -> None:
    """Add this repository to the chief's projects, or, when the person keeps projects and it is not one of
    them, say the command that adds it."""
    from git_balanced.chief import home
    from git_balanced.chief.projects import add_project, list_projects

    kept = (home.folder() / ".git").is_dir()  # without a chief's folder the person keeps no projects yet
    known = next((p for p in list_projects() if not p.machine and p.path == str(root)), None) if kept else None
    if add and known is None:
        p = add_project(str(root))
        ui.say(f"Added it to the chief's projects as {p.name}: `git balanced now --all` shows its rows with the "
               "others'.")
    elif add and known is not None:
        ui.say(f"It is among the chief's projects already, as {known.name}.")
    elif kept and known is None:
        ui.say(f"It is not among the chief's projects: `git balanced projects add {root}` adds it "
               "(or `init --project`).")


def _init(*, check: str | None, setup: str | None, agent: str | None, hooks: str) -> int:
    repo = open_checkout()
    target = repo.root / SETTINGS_PATH
    if target.exists():
        _update(target, check=check, setup=setup, agent=agent)
    else:
        _write_new(repo.root, check=check, setup=setup, agent=agent)
    linked = man_page_where_man_looks()
    if linked:
        ui.say(linked)
    if hooks == "git":
        return _plain_hooks(repo)
    from git_balanced.hooks.precommit import add_balanced_hooks, hooks_starting_at, install_hooks, newly_installed

    newly = newly_installed(repo)
    starting = hooks_starting_at(repo.root, newly)
    changed = add_balanced_hooks(repo.root, newly)
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


NO_CHECK = (f"no check command: no known stack is here (a pyproject.toml, package.json or go.mod), so nothing "
            "decides landing and a finished branch waits for `git balanced land`.\n"
            "  Add one: `git balanced init --check 'CMD'` (the command that runs your tests, e.g. 'make test'), "
            f"or set `check = ...` under [worktree] in {SETTINGS_PATH}.")


def man_page_where_man_looks() -> str | None:
    """Let `git balanced --help` (git runs `man git-balanced`) find the man page when the installer left it
    where man does not look: `uv tool install` keeps it in the tool's own environment and links only the
    executable into ~/.local/bin. man finds pages in the share/man beside each bin folder on PATH, so the page
    is linked there, beside the `git-balanced` git runs. Words saying so, or None when nothing was needed."""
    import shutil
    import sys

    from git_balanced import proc

    exe = shutil.which("git-balanced")
    page = Path(sys.prefix) / "share" / "man" / "man1" / "git-balanced.1"
    if exe is None or shutil.which("man") is None or not page.is_file():
        return None
    if proc.run(["man", "-w", "git-balanced"], timeout=30).ok:
        return None
    target = Path(exe).parent.parent / "share" / "man" / "man1" / "git-balanced.1"
    try:
        if target.exists() or target.is_symlink():
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(page)
    except OSError:
        return None  # a folder not ours to write: `man` just goes on not finding it
    return f"Linked {target} to the man page of this install, so `git balanced --help` finds it."


def _write_new(root: Path, *, check: str | None, setup: str | None, agent: str | None) -> None:
    """Write the settings file from the template: the commands given, else a known stack's, else none (said)."""
    from git_balanced.settings import write_settings

    said, found = _stack(root) if check is None else (None, None)
    if found is not None:
        check, setup = found.check, setup or found.setup
    write_settings(root, check=check, setup=setup, agent=agent)
    if said is not None:
        ui.say(f"Wrote {SETTINGS_PATH} with {said}:\n  setup: {setup or '(none)'}\n  check: {check}")
    elif check is None:
        ui.say(f"Wrote {SETTINGS_PATH} with {NO_CHECK}")
    else:
        ui.say(f"Wrote {SETTINGS_PATH}.")


def _update(target: Path, *, check: str | None, setup: str | None, agent: str | None) -> None:
    """Set `check` and `setup` in the existing settings file, every other line of it (comments too) kept as
    it is; with neither given, say the file is kept."""
    from git_balanced.settings import load_settings_text, render_settings

    if agent:
        raise BalancedError(f"{SETTINGS_PATH} exists already; --agent does not change it, as the model under "
                            "[balanced] goes with the agent.",
                            hint=f"set `agent` and `model` under [balanced] in {SETTINGS_PATH} by hand.")
    given = [(key, value) for key, value in (("setup", setup), ("check", check)) if value is not None]
    if not given:
        ui.say(f"Kept {SETTINGS_PATH} as it is.")
        return
    render_settings(check=check, setup=setup)  # the same checks of the values as for a new file
    try:
        text = set_keys(target.read_bytes().decode("utf-8"), "worktree", dict(given))  # CRLF as it is
    except UnicodeDecodeError as exc:
        raise BalancedError(f"{SETTINGS_PATH} is not UTF-8 text (byte {exc.start}); it is kept as it was.",
                            hint=f"save {SETTINGS_PATH} as UTF-8.") from None
    worktree = load_settings_text(text, SETTINGS_PATH).worktree  # what is written must read back
    if any(getattr(worktree, key) != value for key, value in given):
        raise BalancedError(f"could not set {' and '.join(k for k, _ in given)} under [worktree] in "
                            f"{SETTINGS_PATH}: the file would not read them back; it is kept as it was.",
                            hint=f"set them under [worktree] in {SETTINGS_PATH} by hand.")
    files.write_atomic(target, text, mode=stat.S_IMODE(target.stat().st_mode))  # a kill never leaves it cut
    ui.say(f"Set {' and '.join(f'{k} = {v!r}' for k, v in given)} under [worktree] in {SETTINGS_PATH}; the rest "
           "of it is kept as it was.")


def set_keys(text: str, table: str, values: dict[str, str]) -> str:
    """`text` (TOML) with each `key = value` of `values` in `[table]`, edited by tomlkit so every other line
    is kept as it is, comments included: in place of the key when it is there (in whatever form: under a
    header, dotted, inline), else of its commented-out example (`# check = ...`), else at the end of the
    table (a new table at the end of the file when there is none). A file whose every line ends in CRLF
    keeps CRLF on the lines added."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
    try:
        doc = tomlkit.parse(text.replace("\r\n", "\n") if crlf else text)
    except TOMLKitError:
        from git_balanced.settings import load_settings_text

        load_settings_text(text, SETTINGS_PATH)  # says where the TOML is broken, as for any settings read
        raise BalancedError(f"{SETTINGS_PATH} is not TOML that can be edited; it is kept as it was.",
                            hint=f"fix {SETTINGS_PATH} by hand.") from None
    found = doc.get(table)
    if found is None:
        found = doc[table] = tomlkit.table()
    if not isinstance(found, dict):  # `[[table]]`, or a plain value
        raise BalancedError(f"`{table}` in {SETTINGS_PATH} is not a table, so it cannot take "
                            f"{' and '.join(values)}; the file is kept as it was.",
                            hint=f"make it a [{table}] table in {SETTINGS_PATH} by hand.")
    from git_balanced.settings import toml_value

    for key, value in values.items():
        _set(found, key, tomlkit.value(toml_value(value)))
    out = tomlkit.dumps(doc)
    return out.replace("\n", "\r\n") if crlf else out


def _set(table: Any, key: str, item: Any) -> None:
    """`key = item` in the tomlkit `table`: over the key, else over its commented-out example, else added."""
    from tomlkit.items import Comment, Null, Table

    body = table.value.body if isinstance(table, Table) else []
    example = re.compile(rf"#\s*{re.escape(key)}\s*=")
    at = next((i for i, (k, it) in enumerate(body) if k is None and isinstance(it, Comment)
               and example.match(it.as_string().strip())), None)
    if key in table or at is None:
        table[key] = item
        return
    # tomlkit has no public way to put a key at a place in a table: its own insert, then the comment's
    # place emptied the way its own removal does (a Null keeps every later index right).
    item.trivia.indent = body[at][1].trivia.indent
    table.value._insert_at(at, key, item)
    body[at + 1] = (None, Null())


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
