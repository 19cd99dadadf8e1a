"""The front door (front.py): `--version`, `board`, `inbox` and `hook NAME` run without click, pydantic or mcp,
and say exactly what cli.py's click app says for the same arguments, exit code included."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from git_balanced import cli, front
from git_balanced.kit.verbs import verb
from tests.support.cli import Ran, _as_a_process
from tests.support.plans import lead_repo, piece, plan

HEAVY = ("click", "pydantic", "pydantic_core", "mcp", "rich", "ruamel")
STOP = json.dumps({"hook_event_name": "Stop", "permission_mode": "default"})
READ = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "README.md"}})
# (arguments, stdin): each runs through the front door without click; the lightest first (see the last test)
FAST = [(["--version"], None), (["hook", "pre-tool-use"], READ), (["board"], None), (["board", "--json"], None),
        (["board", "--all", "--json"], None), (["inbox"], None), (["inbox", "--json"], None), (["hook", "stop"], STOP),
        (["hook", "no-such-hook"], None)]


def both(repo: Path, args: list[str], stdin: str | None) -> tuple[Ran, Ran]:
    """The same command through the front door and through click, each as a fresh process would see it."""
    def one(main: Callable[[list[str]], int]) -> Ran:
        with _as_a_process(repo, stdin, {}) as (out, err):
            code = main(list(args))
        return Ran(code, out.getvalue(), err.getvalue())

    return one(front.main), one(cli.main)


@pytest.fixture
def lead(tmp_path: Path) -> Path:
    """A lead with a stored plan (its pieces waiting under Next, a line in the inbox)."""
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("one", "echo 1 > one.txt"), piece("two", "echo 2 > two.txt", after=["one"])]).code == 0
    return repo


def test_the_fast_commands_say_what_click_says(lead: Path, tmp_path: Path) -> None:
    for args, stdin in FAST:
        fast, slow = both(lead, args, stdin)
        assert fast == slow, f"`git balanced {' '.join(args)}` differs through the front door"
        assert front.fast(args) is not None, f"{args} should not need click"
    board, _ = both(lead, ["board"], None)
    assert board.code == 0 and "one" in board.out, "the board of a stored plan names its pieces"
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    for args in (["board"], ["inbox", "--json"]):
        fast, slow = both(outside, args, None)
        assert fast == slow and fast.code == 1 and fast.err.startswith("error: "), "a folder outside git is yours"


@pytest.mark.parametrize("args", [["board", "--nope"], ["board", "-h"], ["inbox", "--json", "extra"], ["hook"],
                                  ["hook", "stop", "--x"], ["--version", "board"], []])
def test_other_arguments_go_to_click(args: list[str], tmp_path: Path) -> None:
    assert front.fast(args) is None
    fast, slow = both(tmp_path, args, None)
    assert fast == slow and fast.code in (0, 2), fast


def test_the_fast_commands_run_what_their_verbs_declare() -> None:
    """front.py names the functions of commands/ and the flags itself: they must be the verbs' own."""
    for name, flags in (("board", front.BOARD_FLAGS), ("inbox", front.INBOX_FLAGS)):
        face = verb(name).cli
        assert face is not None and face.runs == f"{name}:{name}_command"
        assert flags <= {f for a in face.options for f in a.flags}, f"{name} takes no such flag: {flags}"


def test_the_mcp_server_starts_without_click() -> None:
    """`mcp` and `mcp --chief` (what an agent starts on each turn) take the front door; a call, help or anything
    else goes to click, which knows `mcp`'s options as front.py names them."""
    import click

    from git_balanced.cli import cli

    assert front.fast(["mcp"]) is not None and front.fast(["mcp", "--chief"]) is not None
    for args in (["mcp", "--call", "board"], ["mcp", "--help"], ["mcp", "{}"], ["mcp", "--chief", "-h"]):
        assert front.fast(args) is None, args
    command = cli.commands["mcp"]
    assert front.MCP_FLAGS <= {f for p in command.params if isinstance(p, click.Option) for f in p.opts}


def test_the_fast_commands_import_no_click_pydantic_or_mcp(lead: Path) -> None:
    """Run each in one fresh interpreter, one after another; after each, none of the heavy packages is loaded.
    `--version` loads nothing of the package but the front door, and a worker's pre-tool-use no state."""
    script = (
        "import io, json, sys\n"
        "from git_balanced import front\n"
        f"heavy, found, ours = {HEAVY!r}, {{}}, {{}}\n"
        f"for args, stdin in {FAST!r}:\n"
        "    sys.stdin, sys.stdout = io.StringIO(stdin or ''), io.StringIO()\n"
        "    front.main(args)\n"
        "    found[' '.join(args)] = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "    ours[' '.join(args)] = sorted(m for m in sys.modules if m.startswith('git_balanced'))\n"
        "sys.stdout = sys.__stdout__\n"
        "print(json.dumps([found, ours]))\n")
    cp = subprocess.run([sys.executable, "-c", script], cwd=lead, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    found, ours = json.loads(cp.stdout)
    assert found == {" ".join(args): [] for args, _ in FAST}, f"heavy modules imported: {found}"
    assert ours["--version"] == ["git_balanced", "git_balanced.exits", "git_balanced.front"], ours["--version"]
    state = [m for m in ours["hook pre-tool-use"] if m.startswith(("git_balanced.state", "git_balanced.channel"))]
    assert state == [], "a worker's hook on each tool call reads none of the lead's state"
