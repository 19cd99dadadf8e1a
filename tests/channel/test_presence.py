"""When the lead cannot answer, a worker's question comes to you at once; the headless lead's spend is shown
beside its workers' and counts against its plan's budget. In process, with jobs placed by hand."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.channel import presence, questions
from git_balanced.channel.inbox import entries
from git_balanced.commands.board import collect, render
from git_balanced.files import write_atomic
from git_balanced.kit.headless import charge_plans
from git_balanced.lead import Lead, open_lead
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("namer", "true")], budget=2.0).code == 0
    return open_lead(str(repo))


def _job(lead: Lead) -> str:
    pid = next(iter(J.all_plans(lead.repo)))
    return J.place(lead.repo, {"plan": pid, "piece": "namer", "task": "Name it.", "agent": "shell",
                               "machine": "local", "branch": "balanced/namer", "attempt": 1, "lead": lead.branch})


def _headless(lead: Lead, **rec: object) -> None:
    write_atomic(presence.lead_dir(lead.repo, lead.branch) / "lead.json",
                 json.dumps({"agent": "claude", "task": "Name it.", "state": "waiting", "turns": 1, "cost_usd": 0.0,
                             **rec}))


def _state(lead: Lead, qid: str) -> str:
    return str((questions.find(lead.repo, qid) or {})["state"])


def test_a_question_comes_to_you_at_once_when_no_lead_can_answer(lead: Lead) -> None:
    job = _job(lead)
    first = questions.ask(lead.repo, job, "Who reads the inbox?")
    assert _state(lead, first) == "open", "with no lead agent ever known, whoever reads the inbox answers"

    gone = subprocess.Popen(["true"])
    gone.wait()
    _headless(lead, pid=gone.pid)  # a headless lead whose driver ended
    qid = questions.ask(lead.repo, job, "Which name?")
    assert _state(lead, qid) == "passed", "nobody can answer: it is yours at once, not after ask_timeout"
    said = [e["text"] for e in entries(lead.repo, lead.branch)]
    assert f"{qid} from namer waits for you at once, as its lead is not running (the first answer counts): " \
           "Which name?" in said
    assert f"git balanced answer {qid} TEXT" in render(collect(lead))

    _headless(lead, pid=os.getpid())
    assert _state(lead, questions.ask(lead.repo, job, "And the colour?")) == "open", "a running lead answers"
    _headless(lead, pid=subprocess.os.getpid(), state="paused")  # type: ignore[attr-defined]
    paused = questions.ask(lead.repo, job, "And the size?")
    assert _state(lead, paused) == "passed"
    assert (questions.find(lead.repo, paused) or {})["fields"]["passed_why"] == \
        "its lead is paused for its plan's usage limit"

    _headless(lead, pid=gone.pid)
    presence.mark_seen(lead.repo, lead.branch)  # an agent session of the lead took a turn just now
    assert _state(lead, questions.ask(lead.repo, job, "And the shape?")) == "open"
    old = time.time() - 3600
    seen = presence.lead_dir(lead.repo, lead.branch) / presence.SEEN
    os.utime(seen, (old, old))  # not seen for an hour, longer than ask_timeout
    assert _state(lead, questions.ask(lead.repo, job, "And the weight?")) == "passed"


def test_the_leads_spend_counts_against_its_plan(lead: Lead) -> None:
    _headless(lead, pid=None, state="stopped", turns=2, cost_usd=0.5)
    rec = json.loads((presence.lead_dir(lead.repo, lead.branch) / "lead.json").read_text())
    charge_plans(lead, rec, 0.5, time.time() - 5)
    write_atomic(presence.lead_dir(lead.repo, lead.branch) / "lead.json", json.dumps(rec))
    pid = next(iter(J.all_plans(lead.repo)))
    data = collect(lead)
    assert data["plans"] == [{"id": pid, "task": "A test plan", "state": "created", "budget_usd": 2.0,
                              "workers_usd": 0.0, "lead_usd": 0.5, "spent_usd": 0.5}]
    assert data["lead_agent"] == {"agent": "claude", "state": "stopped", "running": False, "turns": 2,
                                  "cost_usd": 0.5, "started_by": "you"}
    text = render(data)
    assert "  ◆ lead  claude, stopped · 2 turns · $0.50" in text, text
    assert f"  $ plan {pid}: $0.50 of $2.00 spent (workers $0.00, lead $0.50) · A test plan" in text, text
    r = balanced(lead.repo.root, "lead", "status")
    assert r.code == 0, r
    assert "  spent     $0.50, its workers $0.00" in r.out, r.out
    assert f"  plan      {pid}: $0.50 of its $2.00 (lead $0.50, workers $0.00) · A test plan" in r.out, r.out


def test_a_sessions_tool_calls_mark_it_seen_and_a_headless_leads_do_not(lead: Lead,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from git_balanced.kit import tools

    monkeypatch.chdir(lead.repo.root)
    monkeypatch.setenv(presence.HEADLESS_ENV, "1")
    tools.board()
    assert presence.seen_at(lead.repo, lead.branch) is None, "the headless lead's own record says if it runs"
    monkeypatch.delenv(presence.HEADLESS_ENV)
    tools.board()
    seen = presence.seen_at(lead.repo, lead.branch)
    assert seen is not None and time.time() - seen < 60
