"""`git balanced mcp` answers the handshake and the tool list before the MCP SDK is imported (kit/wire.py), from a
record that is the SDK's own answers, and hands the rest of the session to the SDK, which takes it on as its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from git_balanced import front
from git_balanced.commands.mcp import recording
from git_balanced.kit import wire
from git_balanced.kit.verbs import VERBS
from tests.support.plans import lead_repo

SDK = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio")


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def hello(version: str, n: int = 1) -> bytes:
    return line({"id": n, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})


READY = line({"method": "notifications/initialized"})


def test_the_record_is_what_the_sdk_answers() -> None:
    listed = json.loads(wire.LISTED.read_text(encoding="utf-8"))
    again = "it is out of date: run `python -m git_balanced.commands.mcp` and commit git_balanced/kit/listed.json"
    assert listed["key"] == wire.key(), again
    for side in ("lead", "chief"):
        assert listed[side] == recording(side), f"the {side}'s record differs from the SDK's answers: {again}"
    assert sorted(listed["lead"]["initialize"]) == sorted(wire.HANDSHAKES)


def test_the_handshake_and_the_tools_are_answered_without_the_sdk(tmp_path: Path) -> None:
    """A fresh interpreter serves initialize and tools/list (its SDK side a stand-in that only reads what it is
    handed): the answers come, and no module of the SDK or pydantic was imported."""
    (tmp_path / "in").write_bytes(hello("2025-06-18") + READY + line({"id": 2, "method": "tools/list"}))
    script = (
        "import json, os, sys\n"
        "from git_balanced.commands import mcp\n"
        "from git_balanced.kit import wire\n"
        "os.dup2(os.open('in', os.O_RDONLY), 0)\n"
        "os.dup2(os.open('out', os.O_WRONLY | os.O_CREAT), 1)\n"
        "wire.serve('lead', lambda lines, out: lines.read())\n"
        f"sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {SDK!r})))\n")
    cp = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and json.loads(cp.stderr) == [], cp.stderr
    answers = [json.loads(x) for x in (tmp_path / "out").read_text().splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["serverInfo"]["name"] == "balanced"
    assert [t["name"] for t in answers[1]["result"]["tools"]] == [v.name for v in VERBS]
    assert front.fast(["mcp"]) and front.fast(["mcp", "--chief"]), "served without click, by the front door"
    assert front.fast(["mcp", "--call", "board"]) is None and front.fast(["mcp", "-h"]) is None


def session(repo: Path, *lines: bytes) -> list[dict[str, Any]]:
    """What a real `git balanced mcp` says to the lines, a client's way: its input open until each request
    was answered."""
    proc = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "mcp"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    said = [json.loads(proc.stdout.readline() or b"null") for x in lines if b'"id"' in x]
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and None not in said, err.decode()
    return said


def test_the_sdk_takes_the_session_on(tmp_path: Path) -> None:
    """Each request is answered once: the handshake and the list from the record, the call by the SDK, which was
    handed the handshake too (its own answer to it is not sent); a version the record has no answer to is the
    SDK's to agree, and then it answers the list as well."""
    repo = lead_repo(tmp_path)
    call = line({"id": 3, "method": "tools/call", "params": {"name": "board", "arguments": {}}})
    said = session(repo, hello("2025-11-25"), READY, line({"id": 2, "method": "tools/list"}), call)
    assert [a["id"] for a in said] == [1, 2, 3], said
    record = wire.record_for("lead")
    assert record is not None and said[0]["result"] == record["initialize"]["2025-11-25"]
    assert "isError" not in said[2]["result"] or not said[2]["result"]["isError"], said[2]
    assert "jobs" in said[2]["result"]["structuredContent"], said[2]
    odd = session(repo, hello("2099-01-01"), READY, line({"id": 2, "method": "tools/list"}))
    assert [a["id"] for a in odd] == [1, 2] and odd[0]["result"]["protocolVersion"] == "2025-11-25"
    assert odd[1]["result"] == said[1]["result"]
