"""The runner's script (over 128 KiB, Linux's most for one argument) goes to a machine on stdin, or here from a
file, never as an argument: every command line started on the way to a runner is watched (Python's audit hook
on subprocess.Popen and os.exec*), on every route there is (this machine, SSH, a box here and a box on an SSH
machine's engine, and the leftover scripts), and each place the package takes the runner's source hands it
to one of those routes."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.prepare import left_there, leftovers
from git_balanced.machines.reach import boxdoor
from git_balanced.machines.reach.hosts import LocalHost
from git_balanced.machines.reach.transport import Transport
from git_balanced.shipped import runner
from tests.support.builders import make_repo

PACKAGE = Path(runner.__file__).resolve().parents[1]
MOST = 16 * 1024  # far above any argument of ours (the bootstrap is 200 bytes), far below the script
# Where the package takes the runner's source (a function's name) -> the calls it may hand it to.
TAKERS = {"source", "runner_source", "processes_script", "_script"}
ROUTES = {"run_python", "open_python", "write_text", "repr"}


class Watch:
    """The argument lists of the processes this one starts while `on`."""

    on = False
    seen: list[list[str]] = []

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.on and event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
            argv = args[1]
            cls.seen.append([argv] if isinstance(argv, (str, bytes)) else [str(a) for a in argv])


sys.addaudithook(Watch.hook)


@contextmanager
def watched() -> Iterator[list[list[str]]]:
    Watch.seen, Watch.on = [], True
    try:
        yield Watch.seen
    finally:
        Watch.on = False


def test_no_route_to_a_runner_puts_its_script_in_an_argument(tmp_path: Path) -> None:
    repo = Repo.discover(str(make_repo(tmp_path / "lead")))
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  Port 9\n")  # refused at once: the command line is what counts
    nowhere = Transport("127.0.0.1", config=config, multiplex=False, connect_timeout=2)
    spec = BoxSpec(kind="container", image="balanced-none:1")
    with watched() as seen:
        LocalHost(repo).call("answer", {})  # a runner session here (refused: no such question)
        leftovers.processes(None, stop=False)
        for t in (nowhere, boxdoor.Shell(boxdoor.Door("box", spec, None), "no-such-box"),
                  boxdoor.Shell(boxdoor.Door("box", spec, nowhere), "no-such-box")):
            with suppress(BalancedError, OSError):  # OSError: an argument too long to start at all
                t.run_python(runner.source(), ["status"], input="{}")
        with suppress(BalancedError):
            leftovers.processes(nowhere, stop=False)
        with suppress(BalancedError, ValueError):
            left_there.find("far", nowhere, {"home": "/nowhere", "repo_path": "/nowhere/x"}, "x", {})
    assert len(seen) >= 7, f"every route started its command: {seen}"
    longest = max((a for argv in seen for a in argv), key=len)
    assert len(longest) < MOST, f"an argument of {len(longest)} bytes: {longest[:200]}…"
    assert not [a for argv in seen for a in argv if "def serve(" in a], "the runner's script is in an argument"


def test_the_runners_source_goes_only_to_those_routes() -> None:
    """Each call that takes the runner's source (runner.source and what wraps it) is itself an argument of a
    route watched above, or the body of a function that hands it on: a new place fails here until it is."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(word in text for word in ("runner.source", "runner_source", "processes_script", "_script(")):
            continue
        tree = ast.parse(text)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _name(node.func) in TAKERS and _of_runner(node.func)):
                continue
            up = parents.get(node)
            while isinstance(up, (ast.JoinedStr, ast.FormattedValue, ast.BinOp)):
                up = parents.get(up)
            handed = isinstance(up, ast.Call) and _name(up.func) in ROUTES
            kept = isinstance(up, (ast.Return, ast.Assign))  # a function that returns or keeps it for a route
            if not (handed or kept):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == [], "the runner's source goes somewhere new: send it on stdin (run_python) and watch it above"


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _of_runner(func: ast.expr) -> bool:
    """`runner.source(...)`, `x.runner_source()`, or a module's own script of the runner (`processes_script`)."""
    if isinstance(func, ast.Attribute):
        return func.attr == "runner_source" or (isinstance(func.value, ast.Name) and func.value.id == "runner")
    return _name(func) in ("processes_script", "_script")
