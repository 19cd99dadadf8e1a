"""A headless lead with nothing new takes no turn: the real Claude Code as lead against the scripted model
server, watched after its first turn while its engine runs, a schedule waits, and the engine is woken every
second (as any command that stores work wakes it): a dozen passes and twenty looks at its inbox, none news."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from git_balanced.channel import schedules
from git_balanced.engine.background import EngineLock
from git_balanced.git import Repo
from git_balanced.lead import Lead
from tests.e2e.test_headless_lead import status
from tests.support.cli import balanced
from tests.support.model_server import say
from tests.support.plans import lead_repo
from tests.support.real_agents import real_agents
from tests.support.wait import wait_until

# Twelve wakes of the engine, each a pass, and the lead's driver looking at its inbox twice a second
# (tests/support/real_agents.py LEAD_POLL).
IDLE = 12.0
WAKE_EVERY = 1.0


def test_an_idle_headless_lead_takes_no_turn_over_a_dozen_engine_passes(tmp_path: Path, agent_bin: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [say("Nothing to plan until the design lands: I wait for news.")]
    with real_agents(monkeypatch, agent_bin, {"claude": turns}) as servers:
        repo = lead_repo(tmp_path)
        assert balanced(repo, "lead", "start", "--agent", "claude", "Wait for the design, then plan it.").code == 0
        try:
            first = wait_until(lambda: (s := status(repo))["state"] == "waiting" and s, 120,
                               "the first turn to end", said=lambda: status(repo))
            assert first["turns"] == 1 and first["last_kind"] == "success", first
            lead = Lead(Repo.discover(str(repo)), "main")
            # Something the engine looks at on every pass, due only in a day: not news.
            schedules.add(lead, "every 24 hours", "Sum up what landed")
            assert EngineLock(lead).holder(), "the lead's engine runs meanwhile"
            asked = len(servers.claude.main_requests())
            assert asked >= 1
            seen: list[dict[str, object]] = []
            tick = time.monotonic()
            end = tick + IDLE
            while time.monotonic() < end:
                now = status(repo)
                seen.append(now)
                assert now["running"] and now["state"] == "waiting", now
                assert len(servers.claude.main_requests()) == asked, "a model request with nothing new"
                lead.wake_engine()  # a pass now, not in 30 s
                tick += WAKE_EVERY  # on the second, however long the look took
                time.sleep(max(0.0, tick - time.monotonic()))
            last = status(repo)
            assert last["turns"] == 1, "no turn was taken"
            assert last["cost_usd"] == first["cost_usd"], "nothing was spent"
            assert last["last_turn_at"] == first["last_turn_at"]
            assert len(servers.claude.main_requests()) == asked
            assert len(seen) >= 10, "it was watched all the while"
            assert EngineLock(lead).holder(), "the engine still runs: the quiet was not a stop"
        finally:
            balanced(repo, "lead", "stop")
            balanced(repo, "engine", "--stop")
