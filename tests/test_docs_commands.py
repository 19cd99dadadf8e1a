"""The docs, the README and every command's --help name only commands and options that exist: each `git
balanced ...` they show (in inline code, or a `$ git balanced` line of a run) is a command of the CLI with options
it takes; each option in a table of a page in docs/commands/ is one of the commands that page shows; and each
command and each option it takes (hidden ones aside) is shown on a page of docs/commands/."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from git_balanced.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
COMMAND_PAGES = sorted((ROOT / "docs" / "commands").glob("*.md"))
SHOWN = re.compile(r"`(?:\$ )?git balanced ([^`]+)`|^\s*\$ git balanced (.+)$", re.M)
ROW_OPTIONS = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
ENDS = {"|", "||", "&&", ";", ">", ">>", "2>&1", "#", "<"}
EVERYWHERE = {"--help", "-h", "--version"}


def commands() -> dict[str, tuple[click.Command, set[str]]]:
    """Every command path of the CLI ('' the top, 'lead on'), with its options' spellings."""
    out: dict[str, tuple[click.Command, set[str]]] = {}

    def walk(cmd: click.Command, path: str) -> None:
        names = {o for p in cmd.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
        out[path] = (cmd, names | EVERYWHERE)
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, f"{path} {name}".strip())

    walk(cli, "")
    return out


CLI = commands()


def wrong(shown: str, after: str = "") -> str | None:
    """What is wrong with `git balanced SHOWN` (its words after `git balanced`), or None; `after` is what follows
    it on its page (a run that shows a wrong option on purpose shows click's `No such option` for it)."""
    try:
        words = shlex.split(shown, comments=True)
    except ValueError:  # a quote left open (a line cut short): its words as they are
        words = shown.split()
    path, i = "", 0
    while i < len(words) and isinstance(CLI[path][0], click.Group) and f"{path} {words[i]}".strip() in CLI:
        path, i = f"{path} {words[i]}".strip(), i + 1
    if isinstance(CLI[path][0], click.Group) and i < len(words) and re.fullmatch(r"[a-z][a-z-]*", words[i]):
        return f"no command `{(path + ' ' + words[i]).strip()}`"
    if not path:  # `git balanced ... --json`: any command
        return None
    interspersed = CLI[path][0].context_settings.get("allow_interspersed_args", True)
    for word in words[i:]:
        if word in ENDS or word == "--":
            break
        option = re.fullmatch(r"(--?[a-zA-Z][\w-]*)(=.*)?", word)
        if not option and not interspersed:  # `seat pytest -q`: the rest are the command's own words
            break
        if option and option.group(1) not in CLI[path][1] and f"No such option '{option.group(1)}'" not in after:
            return f"`{path}` has no option {option.group(1)}"
    return None


def test_what_the_docs_and_the_help_show_exists() -> None:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in SHOWN.finditer(text):
            said = wrong(m.group(1) or m.group(2), text[m.end():m.end() + 300])
            if said:
                found.append(f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {said}")
    runner = CliRunner()
    for path, (cmd, _) in CLI.items():
        if cmd.hidden:
            continue
        helped = runner.invoke(cli, [*path.split(), "--help"]).output
        found += [f"`{path} --help`: {said}" for m in SHOWN.finditer(helped) if (said := wrong(m.group(1) or ""))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("page", COMMAND_PAGES, ids=lambda p: p.name)
def test_a_command_page_tables_only_options_of_the_commands_it_shows(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    shown = {p for p in CLI if p and re.search(rf"git balanced {re.escape(p)}\b", text)}
    known = set().union(*(CLI[p][1] for p in shown)) if shown else set()
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `-")]
    stray = sorted({o for row in rows for o in ROW_OPTIONS.findall(row)} - known)
    assert not stray, f"{page.name} tables options that none of {sorted(shown)} takes: {stray}"


def test_each_command_and_each_of_its_options_is_on_a_command_page() -> None:
    pages = {page: page.read_text(encoding="utf-8") for page in COMMAND_PAGES}
    missing = []
    for path, (cmd, _) in CLI.items():
        if not path or cmd.hidden or any(CLI[" ".join(path.split()[:n])][0].hidden for n in range(1, 3)):
            continue
        on = [text for text in pages.values() if re.search(rf"git balanced {re.escape(path)}\b", text)]
        if not on:
            missing.append(f"`{path}`: no page of docs/commands/ shows it")
            continue
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and not any(
                    re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text) for text in on for o in p.opts):
                missing.append(f"`{path}`: {p.opts[0]} is on none of its pages")
    assert not missing, "\n".join(missing)
