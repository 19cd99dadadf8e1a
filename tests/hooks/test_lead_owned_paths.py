"""While a lead's pieces run, the lead agent's own edit of a path a running piece owns (`paths`) is refused by its
PreToolUse hook, naming the piece and the job; `lead_keeps_off_workers_paths = false` turns that off. The hook
as Claude Code and Codex call it, and the real Claude Code lead against the scripted model server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_balanced.agents import wiring
from git_balanced.jobs import place
from git_balanced.lead import open_lead
from tests.hooks.test_agent import run_claude, tool_results
from tests.hooks.test_modes import hook
from tests.support.builders import commit, make_repo
from tests.support.cli import balanced
from tests.support.model_server import say, write_file
from tests.support.real_agents import bodies, real_agents

OFF = '[balanced]\nlead_keeps_off_workers_paths = false\n'


@pytest.fixture
def lead_repo(tmp_path: Path) -> Path:
    """A lead on main with one piece at work that owns `src/api/**`."""
    repo = make_repo(tmp_path / "lead", {"src/api/app.py": "x = 1\n", "docs/a.md": "# A\n"})
    lead = open_lead(str(repo))
    place(lead.repo, {"plan": "p1", "piece": "orders-api", "task": "t", "lead": "main", "machine": "local",
                      "branch": "balanced/orders-api", "attempt": 1, "paths": ["src/api/**"]})
    return repo


def job_id(repo: Path) -> str:
    from git_balanced import jobs as J

    [job] = J.all_jobs(open_lead(str(repo)).repo).values()
    return job.id


def edit(repo: Path, tool: str, tool_input: dict) -> dict:
    return {"session_id": "s1", "transcript_path": "/nowhere.jsonl", "cwd": str(repo), "hook_event_name": "PreToolUse",
            "permission_mode": "acceptEdits", "tool_name": tool, "tool_input": tool_input}


def decided(repo: Path, payload: dict) -> str:
    ran = hook(repo, "lead-pre-tool-use", payload)
    assert ran.code == 0, ran
    if not ran.out.strip():
        return ""
    out = json.loads(ran.out)["hookSpecificOutput"]
    return f"{out['permissionDecision']}: {out['permissionDecisionReason']}"


def test_an_edit_of_a_running_pieces_path_is_refused_naming_it(lead_repo: Path) -> None:
    job = job_id(lead_repo)
    said = decided(lead_repo, edit(lead_repo, "Write", {"file_path": str(lead_repo / "src/api/app.py")}))
    assert said.startswith("deny: git balanced refused this edit: src/api/app.py belongs to piece orders-api "
                           f"(its `paths` has src/api/**), whose job {job} is at work."), said
    assert f"`git balanced tell {job} TEXT`" in said, said
    patch = "*** Begin Patch\n*** Update File: src/api/app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    assert decided(lead_repo, edit(lead_repo, "apply_patch", {"command": patch})).startswith("deny: "), "Codex's"
    assert decided(lead_repo, edit(lead_repo, "edit", {"path": "src/api/new.py"})).startswith("deny: "), "Pi's"
    assert decided(lead_repo, edit(lead_repo, "Edit", {"file_path": str(lead_repo / "docs/a.md")})) == "", \
        "a path no piece owns is the lead's"
    assert decided(lead_repo, edit(lead_repo, "Read", {"file_path": str(lead_repo / "src/api/app.py")})) == "", \
        "reading is fine"


def test_the_setting_turns_it_off(lead_repo: Path) -> None:
    commit(lead_repo, {".magnum/settings.toml": OFF}, "lead may edit what its workers own")
    assert decided(lead_repo, edit(lead_repo, "Write", {"file_path": str(lead_repo / "src/api/app.py")})) == ""


def test_a_real_claude_lead_is_refused_the_edit(lead_repo: Path, tmp_path: Path, agent_bin: str) -> None:
    settings = wiring.render("claude-lead-settings.json")
    turns = [write_file(f"{lead_repo}/src/api/app.py", "x = 2\n"), write_file(f"{lead_repo}/docs/a.md", "# B\n"),
             say("Done.")]
    log, server = run_claude(tmp_path, agent_bin, lead_repo, settings, turns, {})
    assert (lead_repo / "src/api/app.py").read_text() == "x = 1\n", f"the lead's edit went through:\n{log[-3000:]}"
    assert (lead_repo / "docs/a.md").read_text() == "# B\n", "an edit of its own path goes ahead"
    results = tool_results(server)
    assert any(f"belongs to piece orders-api (its `paths` has src/api/**), whose job {job_id(lead_repo)}" in r
               for r in results), results


@pytest.mark.parametrize("agent", ["codex", "pi"])
def test_a_real_codex_or_pi_lead_is_refused_the_edit(agent: str, lead_repo: Path, agent_bin: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    target = lead_repo / "src/api/new.py"
    path = "src/api/new.py" if agent == "codex" else str(target)  # Codex's patch names it from its folder
    with real_agents(monkeypatch, agent_bin, {agent: [write_file(path, "y = 2\n"), say("Done.")]}) as servers:
        assert balanced(lead_repo, "lead", "on", "--agent", agent).code == 0
        # What a person's first start here answers to its trust questions, so it loads the project's hooks (Codex
        # runs project hooks once someone reviewed them: `--dangerously-bypass-hook-trust` says they were).
        argv = ["codex", "exec", "--json", "--trust", "--dangerously-bypass-hook-trust", "-s", "workspace-write",
                "Do it."] if agent == "codex" else \
            ["pi", "--mode", "json", "--no-session", "--approve", "Do it."]
        ran = subprocess.run(argv, cwd=lead_repo, capture_output=True, text=True, timeout=240,
                             stdin=subprocess.DEVNULL)
        sent = json.dumps(bodies(servers[agent]))
    assert not target.exists(), f"the lead's edit went through:\n{ran.stdout[-3000:]}{ran.stderr[-2000:]}"
    assert f"whose job {job_id(lead_repo)} is at work" in sent, f"{agent} was told why:\n{ran.stdout[-3000:]}"
