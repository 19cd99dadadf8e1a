"""The job's words live in git_balanced/vocab.py alone: no module spells a state as a string where it means one
(comparing, listing, setting, storing it), and the named sets say what their callers mean."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from git_balanced.vocab import (
    AT_WORK,
    DONE,
    ENDED_BADLY,
    LANDABLE,
    LIVE,
    NEEDS_YOU,
    STOPPABLE,
    Action,
    JobState,
    RunState,
)
from tests.support import source

PACKAGE = Path(__file__).resolve().parents[1] / "git_balanced"
# The states' words, of a job, of a run and of a lead's session; shipped/ is stdlib-only code sent to a machine.
NAMES = {str(s) for s in JobState} | {str(s) for s in RunState} | {"waiting", "checking"}
SKIPPED = {"vocab.py", "shipped"}


def _is_state(node: ast.AST) -> bool:
    """`x.state`, `x["state"]`, `x.get("state")` or a variable named like a state."""
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("state")
    if isinstance(node, ast.Name):
        return node.id.lower().endswith("state")
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "state"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "state"
    return False


def _named(node: ast.AST) -> Iterator[ast.Constant]:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in NAMES:
            yield n


def _all_names(node: ast.AST) -> bool:
    elts = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else node.keys if isinstance(node, ast.Dict) \
        else []
    return len(elts) >= 2 and all(isinstance(e, ast.Constant) and e.value in NAMES for e in elts)


def raw_states(tree: ast.AST) -> Iterator[int]:
    """The lines where a state's name is written as a string and used as a state."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_state(s) for s in sides):
                for side in sides:
                    yield from (c.lineno for c in _named(side))
        elif isinstance(node, ast.keyword) and node.arg == "state":
            yield from (c.lineno for c in _named(node.value))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "state":
                    yield from (c.lineno for c in _named(value))
            if _all_names(node):
                yield node.lineno
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and _all_names(node):
            yield node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_is_state(t) for t in targets):
                yield from (c.lineno for c in _named(node.value))
        elif isinstance(node, ast.arguments):
            args = [*node.posonlyargs, *node.args]
            for arg, default in zip(args[len(args) - len(node.defaults):], node.defaults, strict=True):
                if arg.arg.endswith("state"):
                    yield from (c.lineno for c in _named(default))


def found() -> list[str]:
    out = []
    for path in source.files():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in SKIPPED:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for line in sorted(set(raw_states(source.tree(path)))):
            out.append(f"git_balanced/{rel}:{line}: {lines[line - 1].strip()}")
    return out


def test_no_state_is_spelt_as_a_string_outside_vocab() -> None:
    hits = found()
    assert not hits, ("states spelt as strings; use git_balanced/vocab.py's members and sets instead:\n"
                      + "\n".join(hits))


def test_the_finder_sees_each_way_a_state_is_spelt() -> None:
    sample = ('if j.state == "queued": pass\n'
              'LIVE = ("queued", "running")\n'
              'event(repo, i, "x", "s", {}, state="failed")\n'
              'row = {"state": "landed"}\n'
              'state, event = "held", "held"\n'
              'def fail(reason, state="failed"): pass\n'
              'if rec.get("state") in ("stopped", "x"): pass\n'
              'if v.status == "landed": pass\n'  # a verdict's status, not a state
              'print("finished")\n')
    assert sorted(set(raw_states(ast.parse(sample)))) == [1, 2, 3, 4, 5, 6, 7]


def test_the_sets_say_what_their_callers_mean() -> None:
    assert JobState.HELD not in DONE and JobState.HELD in NEEDS_YOU, "a held job waits for you: it can still land"
    assert JobState.FINISHED in STOPPABLE and JobState.FINISHED not in AT_WORK, \
        "a finished job can be given up, but its worker is gone: no question of it waits for an answer"
    assert not (LIVE & DONE) and LIVE | DONE | NEEDS_YOU == set(JobState), "every state is live, done or yours"
    assert ENDED_BADLY < DONE and LANDABLE == {JobState.FINISHED} | NEEDS_YOU and STOPPABLE == LIVE
    assert JobState.QUEUED == "queued" and Action.START == "start", "members equal what stored refs hold"


def test_the_runners_words_are_the_engines() -> None:
    """shipped/ cannot import vocab.py (it runs alone on bare machines), so its constants are a second spelling:
    they must stay the same words, or a run's reason would not read as a failure, nor its state as a run's."""
    from git_balanced.shipped.messages import Reason
    from git_balanced.shipped.messages import RunState as ShippedRunState
    from git_balanced.vocab import Failure, RunState

    shipped_states = {v for k, v in vars(ShippedRunState).items() if k.isupper()}
    assert shipped_states == {s.value for s in RunState}
    failures = {f.value for f in Failure}
    how_it_failed = set(Reason.RUNNER + Reason.OUTCOMES) - {Reason.EXITED, Reason.SUCCESS}
    assert how_it_failed <= failures, f"reason codes that are no failure: {sorted(how_it_failed - failures)}"
