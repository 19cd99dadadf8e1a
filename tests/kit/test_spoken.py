"""A refusal through MCP names the tools an agent has, where the command line names commands (kit/spoken.py)."""

from __future__ import annotations

import pytest

from git_balanced.kit.spoken import for_tools, tool_call


@pytest.mark.parametrize(("said", "heard"), [
    ("see `git balanced board`.", "see `board`."),
    ("see `git balanced board --json` for job ids.", "see `board` for job ids."),
    ("`git balanced stop` it first.", "`stop` it first."),
    ("see `git balanced board`; `git balanced retry JOB` tries a piece again.",
     'see `board`; `retry {"job": "JOB"}` tries a piece again.'),
    ("`git balanced schedule list` shows them.", "`schedule_list` shows them."),
    ("run `git balanced land balanced/x` again.", 'run `land {"names": ["balanced/x"]}` again.'),
    ('git balanced worker "Add a /health endpoint"', '`worker {"task": "Add a /health endpoint"}`'),
    ("or `git balanced worker TASK --run CMD`.", 'or `worker {"task": "TASK", "run": "CMD"}`.'),
    ('quote it: git balanced answer q1 "TEXT"', 'quote it: `answer {"id": "q1", "text": "TEXT"}`'),
    ('git balanced answer q1 --deny "REASON"', '`deny {"id": "q1", "reason": "REASON"}`'),
    ("`git balanced inbox` shows the questions.", "`inbox` shows the questions."),
])
def test_a_command_a_tool_does_is_named_as_that_tool(said: str, heard: str) -> None:
    assert for_tools(said) == heard


@pytest.mark.parametrize("said", [
    "add it with `git balanced machines add m1`.",  # no tool adds a machine
    "then `git balanced land balanced/x --yes`",  # approving protected paths is the person's
    "`git balanced doctor --fix` mends it.",
    "git balanced answer q1 --allow|--deny [REASON]",
    "run `git balanced engine --stop`.",
])
def test_a_command_no_tool_does_is_left_as_it_is(said: str) -> None:
    assert for_tools(said) == said


def test_words_that_name_no_command_are_kept() -> None:
    text = "error: Job nope is not known.\nhint: see the board."
    assert for_tools(text) == text
    assert tool_call("board --watch") == "board" and tool_call("retry") == "retry"
    assert tool_call('worker "unclosed') is None
