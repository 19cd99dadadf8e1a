"""Which agent CLIs `ready --yes` installs: those the settings name (`[balanced] agent`, an `[agents.*]` table)
and those the live plans use, and no other: a shell-only project gets none."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.lead import open_lead
from git_balanced.machines.prepare.ready import wanted_agents
from tests.support.builders import make_repo
from tests.support.cli import balanced


def wanted(repo: Path) -> list[str]:
    return wanted_agents(open_lead(str(repo)))


def test_a_shell_project_wants_no_agent_until_a_plan_uses_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    assert balanced(repo, "init", "--hooks", "git", "--agent", "shell", "--check", "true").code == 0
    assert wanted(repo) == []
    doc = {"task": "One piece", "pieces": [{"id": "one", "task": "Do one.", "agent": "codex"}]}
    assert balanced(repo, "plan", "-", "--wait", input=json.dumps(doc)).code == 0
    assert wanted(repo) == ["codex"]


def test_the_default_settings_want_claude(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    assert balanced(repo, "init", "--hooks", "git", "--check", "true").code == 0
    assert wanted(repo) == ["claude"]
