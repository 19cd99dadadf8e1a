"""`git balanced mcp` starts light: a real server, spoken to in raw JSON-RPC lines. Its first start answers as the
SDK's server does and keeps those answers; the next answers the handshake and `tools/list` from them without
loading pydantic or the SDK, then hands a tool call to the SDK's server. Each tool's listing (name, title,
annotations, input and output schemas) is the one recorded from the server before it started light
(tests/fixtures/mcp/)."""

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

from git_balanced.kit import said
from tests.support.builders import make_repo
from tests.support.cli import balanced

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mcp"
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
         "clientInfo": {"name": "claude-code", "version": "2.0.1"}}


class Wire:
    """A `git balanced mcp` process and the raw lines to and from it."""

    def __init__(self, repo: Path, *args: str) -> None:
        # Through the front door, as the console script an agent starts runs it (front.py takes `mcp` without
        # click); cli.py's own `mcp` is what tests/kit/test_server.py starts.
        self.proc = subprocess.Popen([sys.executable, "-m", "git_balanced.front", "mcp", *args], cwd=repo,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ))
        self.n = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *, note: bool = False) -> int:
        self.n += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method} | ({} if note else {"id": self.n})
        if params is not None:
            message["params"] = params
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return self.n

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result of one request; one left unanswered fails the test, it does not hang it."""
        n = self.send(method, params)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 90)
        assert ready, f"{method} was never answered"
        reply = json.loads(self.proc.stdout.readline())
        assert reply.get("id") == n and "result" in reply, reply
        return dict(reply["result"])

    def start(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The handshake as an agent CLI makes it, then the lists it asks for (the resources and prompts, none):
        the handshake's result and the list of tools."""
        hello = self.ask("initialize", HELLO)
        self.send("notifications/initialized", note=True)
        tools = self.ask("tools/list")
        assert self.ask("resources/list") == {"resources": []} and self.ask("prompts/list") == {"prompts": []}
        return hello, tools

    def loaded(self, library: str) -> bool:
        """Whether the server process has loaded a shared library whose path holds `library`."""
        return library in Path(f"/proc/{self.proc.pid}/maps").read_text()

    def close(self) -> str:
        """Let the server go as a client does, closing its stdin; what it wrote on stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        err = self.proc.stderr.read().decode()
        assert code == 0, err
        return err


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("mcp-start") / "lead",
                     {".magnum/settings.toml": '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n'})
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty folder for the answers the servers keep."""
    monkeypatch.setenv(said.FOLDER_ENV, str(tmp_path / "said"))
    yield tmp_path / "said"


def _fixture(which: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"tools-list-{which}.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("which", ["lead", "chief"])
def test_the_tools_listed_are_those_recorded_before_and_the_next_start_is_light(lead: Path, kept: Path,
                                                                                which: str) -> None:
    args = ("--chief",) if which == "chief" else ()
    first = Wire(lead, *args)
    hello, tools = first.start()
    first.close()
    assert tools == _fixture(which), "every tool's name, title, annotations and schemas as before"
    assert [p.name.split("-")[:2] for p in kept.iterdir()] == [["mcp", which]], "the answers are kept"
    again = Wire(lead, *args)
    assert again.start() == (hello, tools), "the next start answers the same"
    assert not again.loaded("pydantic_core"), "without pydantic, nor the SDK, which is made of it"
    if which == "lead":  # a tool call after a light start: the SDK's server takes over the wire
        n = again.ask("tools/call", {"name": "board", "arguments": {}})
        assert not n.get("isError") and n["structuredContent"]["jobs"] == [], n
        refused = again.ask("tools/call", {"name": "stop", "arguments": {"job": 7}})
        assert refused["isError"] and "Input should be a valid string" in refused["content"][0]["text"], refused
        assert again.ask("tools/list") == tools, "and lists the same tools"
        assert again.loaded("pydantic_core")
    assert "Traceback" not in again.close()
    if which == "lead":
        _another_client_is_answered_by_the_sdk_and_that_answer_kept_too(lead, kept)


def _another_client_is_answered_by_the_sdk_and_that_answer_kept_too(lead: Path, kept: Path) -> None:
    other = Wire(lead)
    hello = other.ask("initialize", {**HELLO, "protocolVersion": "2025-11-25"})
    assert hello["protocolVersion"] == "2025-11-25"
    assert other.loaded("pydantic_core"), "an initialize not heard before goes to the SDK's server"
    other.send("notifications/initialized", note=True)
    assert other.ask("tools/list")["tools"] == _fixture("lead")["tools"]
    other.close()
    (answers,) = kept.iterdir()
    assert len(json.loads(answers.read_text())["answers"]) == 6, "two handshakes, the tools after each, the lists"




def test_a_damaged_file_of_answers_is_not_read_and_is_written_again(kept: Path) -> None:
    kept.mkdir()
    path = kept / f"mcp-lead-{said.key()}.json"
    path.write_text('{"answers": {"x"', encoding="utf-8")
    assert said.load("lead") is None
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
    assert said.store("lead", said.Said({said.question(hello, None): {"ok": True}})) == str(path)
    got = said.load("lead")
    assert got is not None and got.answer({**hello, "id": 9}, None) == {"ok": True}
    (kept / "mcp-lead-0000.json").write_text("{}")
    said.store("lead", said.Said({}))
    assert sorted(p.name for p in kept.iterdir()) == [path.name], "a file of another key is removed"


def test_junk_after_a_light_start_is_the_sdks_to_answer_and_the_server_keeps_answering(lead: Path, kept: Path) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
    said.store("lead", said.Said({said.question(hello, None): {"kept": "here"}}))  # what the next start answers
    w = Wire(lead)
    assert w.ask("initialize", HELLO) == {"kept": "here"}, "answered from the file, as it was kept"
    w.send("notifications/initialized", note=True)
    assert w.proc.stdin is not None
    w.proc.stdin.write(b'not json {\n[1, 2]\n\n')  # the SDK's server reads these, and answers none
    assert w.ask("tools/list")["tools"] == _fixture("lead")["tools"], "the SDK's server took over the wire"
    refused = w.ask("tools/call", {"name": "idea", "arguments": {"text": "a\ud800"}})
    assert refused["isError"] and "`text` holds a lone surrogate (\\ud800)" in refused["content"][0]["text"], refused
    assert w.ask("ping") == {}
    assert "Traceback" not in w.close()
