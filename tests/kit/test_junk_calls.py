"""Junk calls to a real `git balanced mcp`, spoken as raw JSON-RPC lines over its stdio (a client library would
refuse to send most of them): lone surrogates, NUL, oversized, wrong-typed and deeply nested arguments. Every
call is answered, with a tool error (isError) in words, and the server keeps answering afterwards."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.builders import make_repo
from tests.support.cli import balanced

NEST = "[" * 300 + "]" * 300
# (tool, its arguments as raw JSON text (escapes kept as sent), what the refusal must say)
JUNK: list[tuple[str, str, str]] = [
    ("idea", '{"text": "a\\ud800"}', "`text` holds a lone surrogate (\\ud800)"),
    ("idea", '{"text": "\\udfff"}', "lone surrogate (\\udfff)"),
    ("schedule_rm", '{"name": "\\ud800"}', "`name` holds a lone surrogate"),
    ("plan", '{"task": "\\ud800", "pieces": [{"id": "a", "task": "b"}]}', "`task` holds a lone surrogate"),
    ("plan", '{"task": "t", "pieces": [{"id": "a", "task": "b", "after": ["\\udc00"]}]}',
     "`pieces[0].after[0]` holds a lone surrogate"),
    ("answer", '{"id": "q1", "text": "yes \\ud83d"}', "`text` holds a lone surrogate (\\ud83d)"),
    ("put_to_you", '{"summary": "done", "attachments": ["shot\\ud800.png"]}', "`attachments[0]` holds"),
    ("schedule_add", '{"when": "daily 09:00", "text": "\\udbff"}', "`text` holds a lone surrogate"),
    ("worker", '{"task": "a\\u0000b"}', "`task` is \"a\\x00b\": it holds a NUL character"),
    ("deny", '{"id": "q\\u001b[2J", "reason": "no"}', "`id` is \"q\\x1b[2J\": it holds a control character (\\x1b)"),
    ("stop", '{"job": "j\\u0000"}', "`job` is \"j\\x00\": it holds a NUL"),
    ("idea", json.dumps({"text": "x" * 40_000}), "`text` is \"xxx"),
    ("plan", json.dumps({"task": "t" * 100_000, "pieces": [{"id": "a", "task": "b"}]}),
     "it has 100,000 characters, more than 32,768"),
    ("worker", json.dumps({"task": "t", "agent": "shell", "run": "é" * 40_000}),
     "`run` is \"ééé"),
    ("land", json.dumps({"names": ["b"] * 2000}), "`names` lists 2,000 items, more than 1,000"),
    ("put_to_you", json.dumps({"summary": "s", "attachments": ["a" * 5000]}), "`attachments[0]` is"),
    ("stop", '{"job": 7}', "Input should be a valid string"),
    ("plan", '{"task": "t", "pieces": "all of them"}', "pieces"),
    ("plan", '{"task": "t", "pieces": [{"id": "a", "task": "b", "after": ' + NEST + "}]}", "pieces"),
    ("idea", '{"text": ' + NEST + "}", "text"),
    ("plan", json.dumps({"task": "t", "budget": 1e308, "pieces": [{"id": "a", "task": "b"}]}),
     "a number of US dollars from 0 to 100,000"),
    ("plan", json.dumps({"task": "t", "pieces": [{"id": "a", "task": "b", "size": 1e300}]}),
     "the plan tool:1: piece a, `size`: is 1e+300"),
]


class Wire:
    """A `git balanced mcp` process and the raw lines to and from it."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "mcp"], cwd=repo,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ))
        self.n = 0

    def send(self, method: str, params: str) -> int:
        self.n += 1
        line = f'{{"jsonrpc": "2.0", "id": {self.n}, "method": "{method}", "params": {params}}}\n'
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8"))
        self.proc.stdin.flush()
        return self.n

    def answer(self, n: int, timeout: float = 60) -> dict[str, Any]:
        """The reply to call `n`; a call left unanswered fails the test, it does not hang it."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"call {n} was never answered"
        reply = json.loads(self.proc.stdout.readline())
        assert reply.get("id") == n, reply
        return dict(reply)


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    repo = make_repo(tmp_path / "lead", {".magnum/settings.toml": '[worktree]\ncheck = "true"\n'
                                                                  '[balanced]\nagent = "shell"\n'})
    assert balanced(repo, "allow", "--yes").code == 0
    w = Wire(repo)
    n = w.send("initialize", '{"protocolVersion": "2025-06-18", "capabilities": {}, '
                             '"clientInfo": {"name": "junk", "version": "1"}}')
    assert "result" in w.answer(n)
    assert w.proc.stdin is not None
    w.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    w.proc.stdin.flush()
    try:
        yield w
    finally:
        w.proc.kill()
        w.proc.wait(timeout=30)


def test_every_junk_call_is_answered_with_a_tool_error_in_words(wire: Wire) -> None:
    unanswered_or_wrong = []
    for tool, args, said in JUNK:
        n = wire.send("tools/call", f'{{"name": "{tool}", "arguments": {args}}}')
        reply = wire.answer(n)
        result = reply.get("result", {})
        text = "\n".join(c.get("text", "") for c in result.get("content", []))
        if not result.get("isError") or said not in text or "Traceback" in text or len(text) > 4000:
            unanswered_or_wrong.append((tool, args[:80], said, reply))
    assert not unanswered_or_wrong, "\n".join(map(repr, unanswered_or_wrong))
    n = wire.send("tools/call", '{"name": "board", "arguments": {}}')
    assert not wire.answer(n)["result"].get("isError"), "the server still answers"


def test_a_real_pair_of_surrogates_is_a_character_and_goes_through(wire: Wire) -> None:
    n = wire.send("tools/call", '{"name": "idea", "arguments": {"text": "ship it \\ud83d\\ude80"}}')
    result = wire.answer(n)["result"]
    assert not result.get("isError"), result
    n = wire.send("tools/call", '{"name": "board", "arguments": {}}')
    assert "ship it \U0001f680" in json.dumps(wire.answer(n)["result"]["structuredContent"], ensure_ascii=False)
