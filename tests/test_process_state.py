"""No module keeps mutable state of its own (DESIGN §11): caches, pools and locks live in the one per-process
object, `git_balanced/process.py`, so a test forgets them all at once and no module hides a global."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.support import source

PACKAGE = Path(__file__).resolve().parents[1] / "git_balanced"

_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "WeakValueDictionary",
                  "WeakKeyDictionary", "Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore",
                  "local"}
_MUTATORS = {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "extend", "remove", "discard",
             "insert", "appendleft"}
_CACHES = {"cache", "lru_cache", "cached_property"}

# What is still to move into process.py's parts; each entry leaves this list when its module does.
NOT_YET: set[str] = set()


def _called(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return None


def _kept(path: Path) -> list[str]:
    """The module's names that hold state across calls: a container it changes, a lock, a cached function,
    a name a function rebinds with `global`."""
    tree = source.tree(path)
    containers: dict[str, int] = {}
    found: set[str] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if not isinstance(t, ast.Name) or value is None:
                continue
            call = _called(value)
            if call in {"Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "local"}:
                found.add(t.id)
            elif isinstance(value, (ast.Dict, ast.List, ast.Set)) or call in _MUTABLE_CALLS:
                containers[t.id] = node.lineno
                empty = (isinstance(value, (ast.Dict, ast.List)) and not (getattr(value, "keys", None)
                                                                          or getattr(value, "elts", None))
                         or isinstance(value, ast.Call) and not value.args and not value.keywords)
                if empty:  # an empty container at the top of a module is there to be filled
                    found.add(t.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                name = _called(d) or (d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name)
                                      else None)
                if name in _CACHES:
                    found.add(node.name)
    for node in source.nodes(path):
        if isinstance(node, ast.Global):
            found.update(node.names)
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            target = node.func.value
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                if isinstance(t, ast.Subscript):
                    target = t.value
        if isinstance(target, ast.Name) and target.id in containers:
            found.add(target.id)
    return sorted(found)


@functools.cache
def kept_state() -> frozenset[str]:
    """Every module's kept state, as `module:name` (found once; both tests below read it)."""
    out = set()
    for path in source.files():
        rel = path.relative_to(PACKAGE.parent).with_suffix("").as_posix().replace("/", ".")
        if rel == "git_balanced.process":
            continue
        out.update(f"{rel}:{name}" for name in _kept(path))
    return frozenset(out)


def test_no_module_keeps_state_of_its_own() -> None:
    extra = sorted(kept_state() - NOT_YET)
    assert not extra, ("module-level state outside git_balanced/process.py; make it a field of a part "
                       f"(process.part(YourPart)) instead: {extra}")


def test_the_list_of_what_is_still_to_move_is_true() -> None:
    gone = sorted(NOT_YET - kept_state())
    assert not gone, f"these have moved: take them off NOT_YET: {gone}"


def test_the_finder_sees_each_kind_of_kept_state(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import threading, functools\n_A = {}\n_B: list[int] = []\n_C = {'x': 1}\n_L = threading.Lock()\n"
                      "_N = None\nTABLE = {'k': 1}\n"
                      "@functools.lru_cache(maxsize=4)\ndef f(): return 1\n"
                      "def g():\n    global _N\n    _N = 1\n    _A['k'] = 1\n    _B.append(2)\n    return TABLE['k']\n",
                      encoding="utf-8")
    assert _kept(sample) == ["_A", "_B", "_L", "_N", "f"]
    passed = tmp_path / "n.py"
    passed.write_text("_MEMO: dict[str, int] = {}\n_EMPTY = set()\nUSED = {'a': 1}\n"
                      "def f(memo): memo['k'] = 1\ndef g(): return f(_MEMO), len(USED)\n", encoding="utf-8")
    assert _kept(passed) == ["_EMPTY", "_MEMO"]
