"""Reaching a worker on an SSH machine: `logs` reads its log where it runs, through the machine's runner (the
command line and the MCP tool alike), and `tell` answers for a shell worker there as it does here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.plans import engine
from tests.support.sshd import Machines, sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


def test_logs_of_a_worker_on_an_ssh_machine_are_read_there(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"src/base.txt": "ok\n"})
    wire_lead(repo, machines, SETTINGS, tick=["alpha"])
    pieces = [{"id": "api", "task": "Work.", "agent": "shell", "machine": "alpha",
               "run": "echo working on the api over there; sleep 60"}]
    assert balanced(repo, "plan", "-", "--start", input=json.dumps({"task": "t", "pieces": pieces})).code == 0
    assert engine(repo, "--once").code == 0
    rows = json.loads(balanced(repo, "board", "--json").out)["jobs"]
    assert [(r["piece"], r["machine"], r["handle"]) for r in rows] == [("api", "alpha", "e1@alpha")], rows
    try:
        shown = wait_until(lambda: "over there" in (out := balanced(repo, "logs", "e1").out) and out, 60,
                           "the remote worker's log to have its first line")
        assert shown.splitlines() == ["working on the api over there"], shown
        tool = json.loads(balanced(repo, "mcp", "--call", "logs", json.dumps({"job": "e1@alpha"})).out)
        assert tool["lines"] == ["working on the api over there"] and tool["found"] is True, tool
        told = balanced(repo, "tell", "e1", "Use the v2 API.")
        assert told.code == 1 and "is a shell worker" in told.err, told
    finally:
        assert balanced(repo, "stop", "e1").code == 0
