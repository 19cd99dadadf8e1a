"""The real Claude Code, Codex and Pi as workers: a scripted model server for each, the CLIs pointed at them
through the test's environment, and what the tests read back (the board's rows, the landing notes)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import agent_home
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.model_server import ModelServer, Turn, Usage, run_shell
from tests.support.plans import board

AGENTS = ("claude", "codex", "pi")
# A headless lead's driver looks at its inbox twice a second (a person's, every second): news reaches its next
# turn sooner, and an idle lead's looks are as many in half the time.
LEAD_POLL = "0.5"


@dataclass
class Servers:
    """One scripted server per CLI, so the three can work at once without taking each other's turns."""

    claude: ModelServer
    codex: ModelServer
    pi: ModelServer

    def __getitem__(self, agent: str) -> ModelServer:
        return {"claude": self.claude, "codex": self.codex, "pi": self.pi}[agent]


@contextmanager
def real_agents(monkeypatch: pytest.MonkeyPatch, agent_bin: str, turns: dict[str, list[Turn]], *,
                subscription: bool = False, plan_used_percent: float | None = None,
                extra_usage: bool = False) -> Iterator[Servers]:
    """Start the servers and point the three CLIs at them through this test's environment, which the engine
    and its runners inherit (the private HOME holds each CLI's configuration)."""
    home = Path(os.environ["HOME"])
    with ExitStack() as stack:
        servers = Servers(*(stack.enter_context(ModelServer(turns.get(a, []), plan_used_percent=plan_used_percent,
                                                            extra_usage=extra_usage))
                            for a in AGENTS))
        env = agent_home.claude_env(home, servers.claude.url, subscription=subscription)
        env.update(agent_home.codex_env(home, servers.codex.url))
        env.update(agent_home.pi_env(home, servers.pi.url))
        env["PATH"] = agent_bin + os.pathsep + env["PATH"]
        env["GIT_BALANCED_LEAD_POLL"] = LEAD_POLL
        for key in [k for k in os.environ if k not in env]:
            monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield servers


def commit_turn(path: str, text: str, usage: Usage | None = None) -> Turn:
    """A shell tool call that writes `path` in the worktree and commits it."""
    return run_shell(f"printf '{text}\\n' > {path} && git add {path} && git commit -q -m 'Add {path}'", usage)


def agent_piece(pid: str, agent: str, **more: object) -> dict[str, object]:
    return {"id": pid, "task": f"Write src/{pid}.txt and commit it.", "agent": agent, **more}


def notes_by_piece(repo: Path) -> dict[str, dict[str, object]]:
    """The landing notes on the lead's branch, by piece."""
    out = {}
    for line in git(repo, "log", "--first-parent", "--notes=balanced", "--format=%N", "main").splitlines():
        if line.startswith("{"):
            note = json.loads(line)
            out[str(note["piece"])] = note
    return out


def rows(repo: Path) -> dict[str, dict[str, object]]:
    """The board's newest row of each piece."""
    out: dict[str, dict[str, object]] = {}
    for r in board(repo)["jobs"]:  # type: ignore[union-attr]
        if r["piece"] not in out or r["attempt"] >= out[r["piece"]]["attempt"]:
            out[r["piece"]] = r
    return out


def balanced_board_text(repo: Path) -> str:
    """The board as a person reads it, every job shown."""
    r = balanced(repo, "board", "--all")
    assert r.code == 0, r
    return r.out


def bodies(server: ModelServer) -> list[str]:
    """The text of every request that took a scripted turn."""
    return [json.dumps(r.body) for r in server.main_requests()]
