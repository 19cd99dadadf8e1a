"""machines/ in parts, each a folder: which machines there are, the routes to them, getting one ready, where a
piece goes. A part imports only the parts before it, so no two of them lean on each other."""

from __future__ import annotations

import ast
from pathlib import Path

MACHINES = Path(__file__).resolve().parents[2] / "git_balanced" / "machines"
PARTS = ["inventory", "reach", "prepare", "placing"]  # from the bottom up


def test_the_parts_are_the_folders_and_nothing_lies_beside_them() -> None:
    assert sorted(p.name for p in MACHINES.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(PARTS)
    assert [p.name for p in MACHINES.glob("*.py")] == ["__init__.py"], "every module sits in a part"


def test_each_part_imports_only_the_parts_below_it() -> None:
    up = []
    for path in sorted(MACHINES.rglob("*.py")):
        part = path.relative_to(MACHINES).parts[0]
        if part not in PARTS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("git_balanced.machines."):
                target = (node.module or "").split(".")[2]
                if PARTS.index(target) > PARTS.index(part):
                    up.append(f"{path.relative_to(MACHINES)}:{node.lineno} imports {node.module}")
    assert not up, "a part imports one above it:\n" + "\n".join(up)


def test_nothing_in_machines_keeps_state_outside_its_parts_of_the_process() -> None:
    from tests.test_process_state import NOT_YET, kept_state

    assert not {k for k in kept_state() | NOT_YET if k.startswith("git_balanced.machines.")}
