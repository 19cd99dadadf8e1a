"""A piece with `plan_first: true`: the real Claude Code starts in plan mode under a real engine, its plan comes to
the lead as a question through the run's permission prompt tool (shipped/permit.py), and the lead's yes lets it go
ahead and land. Against the scripted model server."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.channel import questions
from git_balanced.channel.inbox import entries
from git_balanced.lead import open_lead
from tests.support.cli import balanced
from tests.support.model_server import call_tool, say, write_plan
from tests.support.plans import background_engine, lead_repo, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents, rows
from tests.support.wait import wait_until

pytestmark = pytest.mark.agents


def seen(repo: Path, log: Path) -> str:
    """What there is to see when the worker does not get on: the engine's log, the inbox, the worker's log."""
    runs = sorted(Path.home().glob(".balanced/runs/*/log")) + sorted(Path.home().glob(".balanced/runs/*/*.log"))
    return "\n".join([log.read_text(), balanced(repo, "inbox").out, balanced(repo, "board").out,
                      *(p.read_text()[-4000:] for p in runs)])


def test_a_worker_shows_its_plan_first_and_goes_ahead_once_the_lead_approves(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {"claude": [write_plan("1. Write src/notes.txt.\n2. Commit it."), call_tool("ExitPlanMode", {}),
                        commit_turn("src/notes.txt", "noted"), say("I wrote src/notes.txt and committed it.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("notes", "claude", plan_first=True)], "--start").code == 0
        lead = open_lead(str(repo))
        log = tmp_path / "engine.log"
        with background_engine(repo, log):
            def plan_asked() -> list[dict]:
                return [e for e in entries(lead.repo, "main") if e.get("ask_kind") == "plan"]

            q = wait_until(plan_asked, 60, "the worker's plan in the lead's inbox", said=lambda: seen(repo, log))[0]
            assert q["text"] == (f"notes shows its plan before it starts ({q['qid']}): 1. Write src/notes.txt.\n"
                                 f"2. Commit it. · answer: git balanced answer {q['qid']} --allow (go ahead) or "
                                 "--deny LINE (send it back with a line)")
            assert not (repo / "src" / "notes.txt").exists()
            assert balanced(repo, "answer", q["qid"], "--allow").code == 0
            wait_until(lambda: rows(repo)["notes"]["state"] in ("landed", "failed"), 180, "notes to land",
                       said=lambda: log.read_text())
    assert rows(repo)["notes"]["state"] == "landed", rows(repo)
    assert (repo / "src" / "notes.txt").read_text() == "noted\n"
    asked = questions.find(lead.repo, q["qid"]) or {}
    assert (asked["fields"]["kind"], asked["fields"]["tool"], asked["fields"]["answered_by"]) == \
        ("plan", "ExitPlanMode", "its lead"), asked
    results = [str(b.get("content")) for r in servers.claude.main_requests() for m in r.body.get("messages", [])
               if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_result"]
    assert any("User has approved your plan" in r for r in results), results
    assert sum(1 for e in entries(lead.repo, "main") if e.get("kind") == "question") == 1, "asked once, not twice"
