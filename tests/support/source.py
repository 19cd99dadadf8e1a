"""The package's source as the tests that read all of it see it (layers, kept state, states spelt as strings):
each file parsed once, and walked once, per test process, however many tests and checks read it."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "git_balanced"


def files() -> list[Path]:
    """Every .py file of the package, sorted."""
    return list(_files())


@functools.cache
def _files() -> tuple[Path, ...]:
    return tuple(sorted(PACKAGE.rglob("*.py")))


def tree(path: Path) -> ast.Module:
    """The file parsed (again only once it changed on disk). Readers must not change the tree."""
    return _parsed(path, *_stamp(path))


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in `ast.walk` order."""
    return _walked(path, *_stamp(path))


def _stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=1024)
def _parsed(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1024)
def _walked(path: Path, mtime_ns: int, size: int) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_parsed(path, mtime_ns, size)))
