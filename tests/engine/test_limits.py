"""Plan usage limits with the real CLIs: each one's limit signal pauses its worker (not a failure, not an
attempt) until the reset and a moment more, then it carries on from what it did; a far reset moves the piece
to another agent with room."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from git_balanced.engine.limits import RESUME_NOTE
from git_balanced.git import Repo
from git_balanced.machines.placing import accounts
from git_balanced.ui import clock
from tests.support.builders import git
from tests.support.model_server import say, usage_limit
from tests.support.plans import board, engine, inbox_text, jobs_of, lead_repo, plan
from tests.support.real_agents import AGENTS, agent_piece, bodies, commit_turn, real_agents, rows
from tests.support.wait import wait_until


def _passes_until(repo: Path, done: Callable[[], bool], seconds: float = 120) -> None:
    """Run single engine passes until `done()` holds, so the test sees each state between passes."""
    def one_pass() -> bool:
        ran = engine(repo, "--once")
        assert ran.code == 0, ran
        return done()

    wait_until(one_pass, seconds, "the engine's passes to get there", every=0.3,
               said=lambda: f"the board: {board(repo)}\n{inbox_text(repo)}")


def test_each_agents_usage_limit_pauses_and_it_carries_on(tmp_path: Path, agent_bin: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    reset = time.time() + 12  # Claude and Codex say when; Pi's 429 does not, so it waits the default
    turns = {a: [commit_turn(f"src/{a}-1.txt", "one"), usage_limit(reset, times=1),
                 commit_turn(f"src/{a}-2.txt", "two"), say("Both parts are committed.")] for a in AGENTS}
    with real_agents(monkeypatch, agent_bin, turns, subscription=True) as servers:
        monkeypatch.setenv(accounts.ENV_MARGIN, "1")  # a minute after the reset, made a second
        monkeypatch.setenv(accounts.ENV_UNKNOWN, "6")  # an hour for Pi, made six seconds
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece(a, a) for a in AGENTS], "--start", budget=3.0).code == 0
        # Each worker's pause as a pass leaves it: a slow machine may see one carry on before the next pauses.
        paused: dict[str, dict[str, object]] = {}

        def all_paused() -> bool:
            for a, row in rows(repo).items():
                if row["state"] == "paused":
                    paused.setdefault(a, row)
            return len(paused) == len(AGENTS)

        _passes_until(repo, all_paused)
        text = inbox_text(repo)
        for a in AGENTS:
            row = paused[a]
            assert row["attempt"] == 1
            goes_on = float(row["resume_at"])  # type: ignore[arg-type]
            assert f"goes on at {clock(goes_on)}" in str(row["reason"]), row
        for a in ("claude", "codex"):
            assert f"{a} reached its plan's usage limit. It pauses until the limit resets at {clock(reset)}" \
                in text, text
            # The reset the agent reported, to the second (Codex's message names only the minute: its
            # session file has the second), and the resume a margin after it; a slow machine may be past the
            # reset by the time the agent is refused, and then it goes on a margin after the pause.
            paused_at = float(paused[a]["updated"])  # type: ignore[arg-type]
            assert float(paused[a]["resume_at"]) == pytest.approx(max(reset, paused_at) + 1, abs=1.5), \
                (a, paused[a])
        assert "pi reached its plan's usage limit. Pi does not say when the limit resets, so it pauses until" \
            in text, text
        assert engine(repo, "--until-idle", timeout=240).code == 0
        asked = {a: bodies(servers[a]) for a in AGENTS}
    text = inbox_text(repo)
    for a in AGENTS:
        attempts = jobs_of(repo, a)
        assert [(j["attempt"], j["state"]) for j in attempts] == [(1, "landed")], \
            f"{a}: the pause was not an attempt: {attempts}"
        assert f"{a}: its usage limit has reset, so it carries on" in text
        for part in ("1", "2"):
            assert (repo / "src" / f"{a}-{part}.txt").exists(), f"{a} carried on from part 1 to part 2"
        told = [b for b in asked[a] if RESUME_NOTE[:40] in b]
        assert told, f"{a}'s second run was told to carry on from what it did"


def test_a_far_reset_moves_the_piece_to_another_agent(tmp_path: Path, agent_bin: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    reset = time.time() + 2 * 3600
    turns = {"claude": [commit_turn("src/part-1.txt", "claude"), usage_limit(reset)],
             "codex": [commit_turn("src/part-2.txt", "codex"), say("I finished what Claude started.")]}
    with real_agents(monkeypatch, agent_bin, turns, subscription=True) as servers:
        repo = lead_repo(tmp_path, extra='\n[agents.codex]\nmodels = ["gpt-5.5"]\n')
        assert plan(repo, [agent_piece("story", "claude")], "--start", budget=1.0).code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
        codex_asked = bodies(servers.codex)
    attempts = jobs_of(repo, "story")
    assert [(j["attempt"], j["agent"], j["state"]) for j in attempts] == [
        (1, "claude", "retried"), (1, "codex", "landed")], attempts
    assert "Claude can't take it: Codex instead" in str(attempts[0]["reason"]), attempts[0]
    assert attempts[1]["model"] == "gpt-5.5", "the new agent starts on its own ladder"
    assert float(attempts[1]["budget_usd"]) == pytest.approx(  # type: ignore[arg-type]
        1.0 - float(attempts[0]["cost_usd"]), abs=1e-4), "with what is left of the budget"
    text = inbox_text(repo)
    assert f"story reached its plan's usage limit, which resets at {clock(reset)}. Claude can't take it: " \
           "Codex instead, on local" in text, text
    plan_log = git(repo, "log", "--format=%s", f"refs/balanced/plans/{attempts[0]['plan']}")
    assert "story: Claude can't take it: Codex instead" in plan_log, "the plan says why"
    assert (repo / "src" / "part-1.txt").read_text() == "claude\n", "what Claude did came along"
    assert (repo / "src" / "part-2.txt").read_text() == "codex\n"
    assert codex_asked, "Codex did the rest"
    claude = accounts.windows(Repo.discover(str(repo)), "claude", "local")
    assert claude["limit"]["resets_at"] == pytest.approx(reset, abs=1), claude


def test_a_queued_piece_over_the_reserve_moves_to_another_agent_with_room(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {"codex": [commit_turn("src/story.txt", "codex"), say("Done.")]}
    with real_agents(monkeypatch, agent_bin, turns):
        repo = lead_repo(tmp_path, extra='\n[agents.codex]\nmodels = ["gpt-5.5"]\n')
        reset = time.time() + 3600
        accounts.record(Repo.discover(str(repo)), "claude", "local",
                        [{"type": "five_hour", "used_percent": 95.0, "resets_at": reset}])
        assert plan(repo, [agent_piece("story", "claude")], "--start").code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
    attempts = jobs_of(repo, "story")
    assert [(j["attempt"], j["agent"], j["state"]) for j in attempts] == [(1, "codex", "landed")], \
        "moved before it started: no attempt spent on Claude"
    text = inbox_text(repo)
    assert "story has not started, and Claude on local takes no new workers, as its plan's 5-hour window is " \
           f"95% used, past the 20% you keep, resets {clock(reset)}. Claude can't take it: Codex instead, on " \
           "local" in text, text
