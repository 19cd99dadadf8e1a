"""`git balanced mcp` loads the SDK's server once it has answered `tools/list` from what was kept, in a thread of
its own: a tool call sent at once, while that load runs, waits for it and is answered by the real server; a
client that goes away meanwhile ends the server at once; a load that fails is the call's error answer. Each
server is started as the console script starts it (front.main), and spoken to in raw JSON-RPC lines."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_balanced.kit import said
from tests.support.builders import make_repo
from tests.support.cli import balanced

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
         "clientInfo": {"name": "claude-code", "version": "2.0.1"}}
CONSOLE_SCRIPT = "import sys; from git_balanced.front import main; sys.exit(main())"


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("mcp-preload") / "lead",
                     {".magnum/settings.toml": '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n'})
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of kept answers to the handshake and the list (a list of its own: the start answers what it
    finds), so that the start answers both without the SDK."""
    monkeypatch.setenv(said.FOLDER_ENV, str(tmp_path / "said"))
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    said.store("lead", said.Said({said.question(hello, None): {"kept": "hello"},
                                  said.question(listing, hello): {"tools": [{"name": "kept"}]}}))
    return tmp_path / "said"


def start(repo: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`git balanced mcp`, its handshake, `tools/list` and a call of the board's tool sent at once, before any
    answer is read (the call reaches it while it loads the SDK's server)."""
    proc = subprocess.Popen([sys.executable, "-c", CONSOLE_SCRIPT, "mcp"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or dict(os.environ))
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})))
    proc.stdin.flush()
    return proc


def answers(proc: subprocess.Popen[bytes], n: int) -> list[dict[str, Any]]:
    """The first `n` lines the server writes (read from its pipe as they come: a buffered reader may hold
    lines select cannot see); one that never comes fails the test, it does not hang it."""
    assert proc.stdout is not None
    out = b""
    while out.count(b"\n") < n:
        ready, _, _ = select.select([proc.stdout], [], [], 90)
        assert ready, f"answered only {out!r}"
        part = os.read(proc.stdout.fileno(), 1 << 16)
        assert part, f"the server ended, having answered only {out!r}"
        out += part
    return [json.loads(line) for line in out.splitlines()[:n]]


def close(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Close the wire as a client does: the exit code and what the server wrote on stderr."""
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    code = proc.wait(timeout=60)
    return code, proc.stderr.read().decode()


CALL = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "board", "arguments": {}}}).encode() + b"\n"


def test_a_tool_call_sent_while_the_server_loads_waits_for_it_and_is_answered(lead: Path, kept: Path) -> None:
    proc = start(lead)
    assert proc.stdin is not None
    proc.stdin.write(CALL)
    proc.stdin.flush()
    hello, listed, called = answers(proc, 3)
    assert (hello["result"], listed["result"]) == ({"kept": "hello"}, {"tools": [{"name": "kept"}]}), \
        "the handshake and the list answered from what was kept, the handshake's answer not sent twice"
    assert called["id"] == 3 and not called["result"].get("isError"), called
    assert called["result"]["structuredContent"]["jobs"] == [], "the board's tool answered, by the SDK's server"
    code, err = close(proc)
    assert code == 0 and "Traceback" not in err, err


def test_a_client_gone_while_the_server_loads_ends_it_at_once(lead: Path, kept: Path) -> None:
    proc = start(lead)
    assert [a["id"] for a in answers(proc, 2)] == [1, 2]
    assert close(proc) == (0, ""), "nothing said, nothing waited for"


def test_a_load_that_fails_is_the_tool_calls_error_answer(lead: Path, kept: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "anyio"  # a module the SDK's server imports, broken where Python finds it first
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("anyio is planted broken")\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken.parent), os.environ.get("PYTHONPATH", "")])}
    proc = start(lead, env)
    assert proc.stdin is not None
    proc.stdin.write(CALL + b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}\n')
    proc.stdin.flush()
    *_, called, again = answers(proc, 4)
    error = called["error"]
    assert called["id"] == 3 and error["code"] == -32603, called
    assert error["message"].startswith("error: git balanced could not load its MCP server: ImportError: anyio "
                                       "is planted broken (at "), error
    assert "\nhint: reinstall git balanced" in error["message"], error
    assert again["error"] == error, "and so is each request after it"
    code, err = close(proc)
    assert code == 1 and err == error["message"] + "\n", "said once on stderr, with no traceback"
