"""Extra usage (paid beyond the plan), read from each agent's own reports: the real Claude Code's
`rate_limit_event` and Codex's `rate_limits` credits. The worker that reported it goes on and lands (its
requests were served), and its account takes no new workers, with the reason."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from git_balanced.agents import extra_usage, get
from git_balanced.git import Repo
from git_balanced.machines.placing import accounts
from git_balanced.ui import clock
from tests.support.cli import balanced
from tests.support.model_server import EXTRA_USAGE_RESET, say
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents

AGENTS = ("claude", "codex")


def test_an_account_on_extra_usage_lands_its_work_and_takes_no_new_workers(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {a: [commit_turn(f"src/{a}.txt", a), say("Committed.")] for a in AGENTS}
    with real_agents(monkeypatch, agent_bin, turns, subscription=True, extra_usage=True):
        repo = lead_repo(tmp_path, extra='\n[agents.codex]\nmodels = ["gpt-5.5"]\n')
        assert plan(repo, [agent_piece(a, a) for a in AGENTS], "--start", budget=2.0).code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
        reset = time.time() + EXTRA_USAGE_RESET
        for a in AGENTS:
            attempts = [(j["attempt"], j["state"]) for j in jobs_of(repo, a)]
            assert attempts == [(1, "landed")], f"{a}: served on extra usage, not paused: {attempts}"
            extra = accounts.windows(Repo.discover(str(repo)), a, "local").get(extra_usage.EXTRA)
            assert extra is not None and extra["resets_at"] == pytest.approx(reset, abs=30), (a, extra)
        assert plan(repo, [agent_piece("more", "claude")], "--start").code == 0
        assert engine(repo, "--once").code == 0
        ready = balanced(repo, "ready")
    text = inbox_text(repo)
    said = f"more waits: Claude on local takes no new workers, as it is on extra usage, paid beyond its plan, " \
           f"until its plan's window resets at {clock(reset)}"
    assert said in text or said.replace(clock(reset), clock(reset - 60)) in text, text
    assert [j["state"] for j in jobs_of(repo, "more")] == ["queued"], "not started on paid usage"
    for a in ("Claude", "Codex"):
        assert f"{a} takes no new workers here, as it is on extra usage, paid beyond its plan" in ready.out, ready


def test_extra_usage_is_one_more_window_of_each_agents_report() -> None:
    assert extra_usage.from_claude({"status": "rejected", "resetsAt": 1800000000, "isUsingOverage": True}) == \
        {"type": "extra_usage", "used_percent": 100.0, "resets_at": 1800000000.0}
    assert extra_usage.from_claude({"status": "allowed", "isUsingOverage": False}) is None
    spent = [{"type": "five_hour", "used_percent": 100.0, "resets_at": 1800000000}]
    assert extra_usage.from_codex(spent, {"has_credits": True, "unlimited": False, "balance": "3.00"}) == \
        extra_usage.window(1800000000)
    assert extra_usage.from_codex(spent, {"has_credits": True, "unlimited": True}) is None, "not paid by usage"
    assert extra_usage.from_codex(spent, {"has_credits": False}) is None, "no credits: the plan's limit"
    assert extra_usage.from_codex([{**spent[0], "used_percent": 40.0}], {"has_credits": True}) is None
    log = '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1800000000,' \
          '"isUsingOverage":true}}\n{"type":"result","subtype":"success","is_error":false,"result":"ok"}\n'
    assert get("claude").outcome(log, 0).kind == "success", "a request served on extra usage is no refusal"
