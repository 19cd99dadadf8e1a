"""The package's layers (DESIGN §11): every import, inside functions too, points down; no two modules import each
other, directly or round a circle; nothing imports commands/; only cli.py imports click; shipped/ is stdlib only."""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import source

PACKAGE = Path(__file__).resolve().parents[1] / "git_balanced"

# From the bottom up; a module may import its own layer's package, or any layer below it.
LAYERS = ["errors ui faults proc files bundled fence untrusted process knobs typed", "shipped", "git",
          "models settings settings_kept settings_view trust vocab", "lead", "state", "jobs job_events handles",
          "agents", "machines",
          "channel", "landing", "forge", "hooks", "engine", "plans", "kit", "chief", "board_app", "commands",
          "cli front exits"]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names.split()}


def modules() -> dict[str, Path]:
    out = {}
    for path in source.files():
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(path: Path, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) for every import of this package in the file, at any depth."""
    for node in source.nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "git_balanced":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield node.lineno, full if full in known else node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "git_balanced":
                    yield node.lineno, alias.name


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@functools.cache
def edges() -> dict[str, set[str]]:
    """Each module's imports of other modules of the package (made once; callers only read it)."""
    known = modules()
    out: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        for _, target in imports(path, known):
            if target != module and target in known and target != "git_balanced":
                out[module].add(target)
    return out


def test_every_package_module_has_a_layer() -> None:
    unknown = sorted({layer(m) for m in modules()} - set(RANK) - {"git_balanced", "__init__"})
    assert not unknown, f"modules outside the layers of DESIGN §11: {unknown}; add them to LAYERS or move them"


def test_imports_point_only_down_the_layers() -> None:
    up = sorted(f"{a} -> {b}" for a, targets in edges().items() for b in targets
                if layer(a) != layer(b) and layer(a) in RANK and RANK[layer(a)] < RANK[layer(b)])
    assert not up, "imports that point up a layer:\n" + "\n".join(up)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative enough for this size)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_between_modules_or_folders() -> None:
    graph = edges()
    assert not _cycles(graph), f"import circles between modules: {_cycles(graph)}"
    folders: dict[str, set[str]] = {}
    for a, targets in graph.items():
        for b in targets:
            if layer(a) != layer(b):
                folders.setdefault(layer(a), set()).add(layer(b))
    assert not _cycles(folders), f"import circles between folders: {_cycles(folders)}"


def test_the_layer_check_finds_a_circle_and_an_upward_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert RANK["state"] < RANK["engine"], "so engine -> state is down and state -> engine would be reported"


def test_nothing_imports_commands_and_only_cli_imports_click() -> None:
    known = modules()
    into_commands = sorted(m for m, targets in edges().items() for t in targets
                           if layer(t) == "commands" and layer(m) not in ("commands", "cli", "front"))
    assert not into_commands, f"modules that import commands/: {into_commands}"
    click_users = sorted(m for m, path in known.items()
                         if any(isinstance(n, (ast.Import, ast.ImportFrom))
                                and any((getattr(n, "module", None) or a.name).split(".")[0] == "click"
                                        for a in n.names)
                                for n in source.nodes(path)))
    assert click_users == ["git_balanced.cli"], click_users


def _unless_sent(node: ast.AST) -> bool:
    """Whether `node` is `if "name" not in globals():`, true only outside the runner's one script."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Constant) and isinstance(test.ops[0], ast.NotIn)
            and isinstance(test.comparators[0], ast.Call) and getattr(test.comparators[0].func, "id", "") == "globals")


@pytest.mark.parametrize("path", sorted((PACKAGE / "shipped").glob("*.py")), ids=lambda p: p.name)
def test_shipped_code_is_stdlib_only(path: Path) -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    tree = source.tree(path)
    # The runner may try the installed package first and fall back to meter.py beside it: only inside a try. Or
    # only where the one script sent to a machine (runner.source()) defined the names already: `if "x" not in
    # globals():`.
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) or _unless_sent(t) for n in ast.walk(t)}
    for node in source.nodes(path):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        for name in names:
            top = name.split(".")[0]
            assert top in stdlib or (top == "git_balanced" and id(node) in guarded), \
                f"{path.name}:{node.lineno} imports {name}, which a machine without git balanced lacks"
