"""The runner's messages: a start request and a result check their fields on both sides of the wire."""

from __future__ import annotations

import ast

import pytest

from git_balanced.shipped import guard, launch, runner
from git_balanced.shipped.messages import MessageError, Reason, Result, StartRequest

BASE = {"job": "j1", "repo": "/r", "worktree": "/w", "branch": "balanced/p", "base": "abc", "argv": ["sh", "-c", "x"]}


def test_a_request_goes_over_the_wire_and_back_unchanged() -> None:
    sent = StartRequest(**BASE, env={"A": "1"}, grace=2.0, own_copy=True)  # type: ignore[arg-type]
    assert StartRequest.from_json(sent.to_json()) == sent


@pytest.mark.parametrize(("extra", "words"), [
    ({"comit_message": "x"}, "does not know: comit_message"),
    ({"grace": "soon"}, "'grace' must be a float, not str"),
    ({"ask": 1}, "'ask' must be a bool, not int"),
    ({"argv": []}, "non-empty list"),
    ({"argv": ["ok", 3]}, "'argv' must hold strings only"),
    ({"env": {"A": 1}}, "'env' must hold strings only"),
    ({"branch": "-x"}, "is not a name"),
    ({"job": "../etc"}, "not a plain name"),
])
def test_a_bad_request_is_refused_naming_its_field(extra: dict, words: str) -> None:
    with pytest.raises(MessageError, match=words.replace("(", r"\(")):
        StartRequest.from_json({**BASE, **extra})


def test_a_missing_field_is_named() -> None:
    with pytest.raises(MessageError, match="the request has no 'worktree'"):
        StartRequest.from_json({k: v for k, v in BASE.items() if k != "worktree"})


def test_a_result_with_an_unknown_reason_is_refused() -> None:
    with pytest.raises(MessageError, match="'reason' must be one of"):
        Result.from_json({"job": "j1", "started": 1.0, "base": "abc", "reason": "exploded"})


@pytest.mark.parametrize(("old", "reason"), [
    ({"setup_failed": True, "error": "x"}, Reason.SETUP_FAILED),
    ({"error": "could not start claude: [Errno 2] No such file or directory: 'claude'"}, Reason.NOT_INSTALLED),
    ({"error": "the runner failed: OSError: disk full"}, Reason.CRASHED),
    ({"stopped": True, "stopped_by_budget": True}, Reason.BUDGET),
    ({"stopped": True}, Reason.STOPPED),
    ({"commit_error": "The guard refused this commit: a.txt ..."}, Reason.GUARD),
    ({"commit_error": "hook said no"}, Reason.FAILED),
    ({"exit_code": 0, "commits": 2}, Reason.EXITED),
])
def test_a_result_from_before_the_reason_code_still_reads(old: dict, reason: str) -> None:
    """A worker started by an older version, still running when this one came, ends with such a result."""
    written = {"job": "j1", "started": 1.0, "base": "abc", "exit_code": None, "commit_error": None, **old}
    assert Result.read(written).reason == reason


def test_the_guard_and_the_runner_name_the_refusal_mark_alike() -> None:
    assert guard.REFUSED_MARK == launch.GUARD_REFUSED


def test_the_one_script_defines_each_name_once() -> None:
    """The runner's parts share one namespace on a machine: a name two of them define would be the last one's."""
    seen: dict[str, int] = {}
    twice = []
    for node in ast.parse(runner.source()).body:
        names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
            [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else []
        twice += [n for n in names if n in seen]
        seen.update(dict.fromkeys(names, node.lineno))
    assert not twice, f"defined by two of the runner's parts: {twice}"


@pytest.mark.parametrize(("action", "request_", "misspelt"), [
    ("stop", {"job": "j1", "wiat": 5}, "wiat"),
    ("log", {"job": "j1", "ofset": 0}, "ofset"),
    ("cleanup", {"job": "j1", "repo": "/r", "worktree": "/w", "prun": False}, "prun"),
    ("forwarded", {"job": "j1", "ns": [1], "n": 1}, "n"),
    ("answer", {"job": "j1", "n": 1, "desicion": "allow"}, "desicion"),
    ("status", {"job": ["j1"]}, "job"),
])
def test_each_action_refuses_a_misspelt_field_naming_it(action: str, request_: dict, misspelt: str) -> None:
    answer = runner._act(action, request_)
    assert f"does not know: {misspelt} " in answer["error"], answer
