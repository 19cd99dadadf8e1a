"""`git balanced lead start`: the real Claude Code as a headless lead against the scripted model server. Its
first turn is the task; a landing, a worker's question and a schedule firing each reach it as a new turn on
the same session (each request the server sees carries the conversation so far)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from git_balanced.channel import questions, schedules
from git_balanced.git import Repo
from git_balanced.lead import Lead
from tests.support.cli import balanced
from tests.support.model_server import ModelServer, call_tool, say, usage_limit_in
from tests.support.plans import board, inbox_text, lead_repo, piece
from tests.support.real_agents import real_agents
from tests.support.wait import wait_until

TASK = "Write src/alpha.txt and src/beta.txt, in two pieces."


def status(repo: Path) -> dict[str, object]:
    r = balanced(repo, "lead", "status", "--json")
    assert r.code == 0, r
    return json.loads(r.out)


def turn_with(server: ModelServer, text: str) -> str | None:
    """The body of the first request that took a turn and carries `text`."""
    return next((b for b in (json.dumps(r.body) for r in server.main_requests()) if text in b), None)


def test_a_headless_claude_lead_takes_a_turn_for_each_batch_of_news(tmp_path: Path, agent_bin: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pieces = [piece("alpha", "echo alpha > src/alpha.txt"), piece("beta", "echo beta > src/beta.txt")]
    turns = [call_tool("plan", {"task": TASK, "pieces": pieces}), say("I planned alpha and beta.")]
    with real_agents(monkeypatch, agent_bin, {"claude": turns}) as servers:
        repo = lead_repo(tmp_path)
        started = balanced(repo, "lead", "start", "--agent", "claude", TASK)
        assert started.code == 0, started
        try:
            def landed() -> bool:
                return [j["state"] for j in board(repo)["jobs"]] == ["landed", "landed"]  # type: ignore[index]

            wait_until(landed, 180, "the lead's plan to land", said=lambda: inbox_text(repo))
            news = wait_until(lambda: turn_with(servers.claude, "landed in main"), 120,
                              "the landings to reach the lead as a turn", said=lambda: status(repo))
            assert TASK in news, "the landing came as a turn of the same conversation"
            first = status(repo)
            assert first["running"] and first["session"], first

            lead = Lead(Repo.discover(str(repo)), "main")
            job = str(board(repo)["jobs"][0]["id"])  # type: ignore[index]
            questions.ask(lead.repo, job, "Which port should the server use?", lead_branch="main")
            asked = wait_until(lambda: turn_with(servers.claude, "Which port should the server use?"), 120,
                               "the worker's question to reach the lead as a turn", said=lambda: status(repo))
            assert TASK in asked and "landed in main" in asked, "still the same conversation"

            schedules.add(lead, "every 5 minutes", "Sum up what landed")
            assert schedules.fire_due(lead, schedules.now() + timedelta(minutes=6)) == ["s1"]
            fired = wait_until(lambda: turn_with(servers.claude, "[balanced] Scheduled (s1"), 120,
                               "the schedule to reach the lead as a turn", said=lambda: status(repo))
            assert TASK in fired and "Which port" in fired
            last = wait_until(lambda: (s := status(repo))["state"] == "waiting" and s, 60, "the turn to end")
            assert last["session"] == first["session"], "every turn on one session"
            assert int(last["turns"]) >= 4 and float(last["cost_usd"]) > 0, last  # type: ignore[arg-type]
            shown = balanced(repo, "lead", "status")
            assert "waits on  news in its inbox" in shown.out and "Claude Code, waiting" in shown.out, shown.out
        finally:
            balanced(repo, "lead", "stop")
            balanced(repo, "engine", "--stop")
    assert status(repo)["state"] == "stopped"


def test_a_headless_lead_refused_for_its_limit_carries_on_after_the_reset(tmp_path: Path, agent_bin: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The reset 12 s after the refused request however long the agent took to send it, so the pause is there to
    # see on a busy machine too.
    turns = [usage_limit_in(12, times=1), say("Carried on: nothing is left to do.")]
    with real_agents(monkeypatch, agent_bin, {"claude": turns}, subscription=True) as servers:
        monkeypatch.setenv("GIT_BALANCED_RESUME_MARGIN", "1")
        repo = lead_repo(tmp_path)
        assert balanced(repo, "lead", "start", "--agent", "claude", TASK).code == 0
        try:
            paused = wait_until(lambda: (s := status(repo))["state"] == "paused" and s, 60,
                                "the lead to pause for its limit", said=lambda: status(repo))
            assert "usage limit" in str(paused["waits_on"]), paused
            went_on = wait_until(lambda: turn_with(servers.claude, "carry on where you left off"), 60,
                                 "the lead to be told to carry on", said=lambda: status(repo))
            assert TASK in went_on, "on the same session, after the reset"
            done = wait_until(lambda: (s := status(repo))["state"] == "waiting" and s, 60, "the turn to end")
            assert done["turns"] == 2 and done["last_kind"] == "success", done
            assert float(done["last_turn_at"]) >= servers.claude.resets[0], "it waited for the reset"  # type: ignore[arg-type]
            assert "Carried on" in str(done["last_words"])
        finally:
            balanced(repo, "lead", "stop")
            balanced(repo, "engine", "--stop")


@pytest.mark.parametrize("agent", ["codex", "pi"])
def test_codex_and_pi_as_headless_leads_take_news_as_turns_of_one_session(agent: str, tmp_path: Path,
                                                                          agent_bin: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [say("I will plan it once I know more."), say("Noted: summing up.")]
    with real_agents(monkeypatch, agent_bin, {agent: turns}) as servers:
        repo = lead_repo(tmp_path)
        assert balanced(repo, "lead", "start", "--agent", agent, TASK).code == 0
        try:
            first = wait_until(lambda: (s := status(repo))["state"] == "waiting" and s, 120,
                               "the first turn to end", said=lambda: status(repo))
            assert first["session"] and first["turns"] == 1 and first["last_kind"] == "success", first
            lead = Lead(Repo.discover(str(repo)), "main")
            schedules.add(lead, "every 5 minutes", "Sum up what landed")
            assert schedules.fire_due(lead, schedules.now() + timedelta(minutes=6)) == ["s1"]
            fired = wait_until(lambda: turn_with(servers[agent], "[balanced] Scheduled (s1"), 120,
                               "the schedule to reach the lead as a turn", said=lambda: status(repo))
            assert TASK in fired, "the same conversation goes on"
            done = wait_until(lambda: (s := status(repo))["state"] == "waiting" and s["turns"] == 2 and s, 60,
                              "the second turn to end")
            assert done["session"] == first["session"] and "summing up" in str(done["last_words"]), done
            spent = [float(str(s["cost_usd"])) for s in (first, done)]
            assert spent[1] == pytest.approx(2 * spent[0], rel=1e-3), \
                "each turn costs what it added (a reply of the same usage), not the session so far"
        finally:
            balanced(repo, "lead", "stop")
            balanced(repo, "engine", "--stop")
