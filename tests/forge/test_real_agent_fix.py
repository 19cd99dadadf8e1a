"""The real Claude Code as the fixing session, against the scripted model server: it gets the failed check
with its log, commits a fix, and its `git push` is refused; the fix waits as `Ready to push`."""

from __future__ import annotations

import json

import pytest

from tests.forge.conftest import Project
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.forge import TOKEN, Run
from tests.support.model_server import run_shell, say
from tests.support.real_agents import real_agents


def test_a_real_claude_worker_fixes_the_failed_check(project: Project, agent_bin: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo, forge = project.repo, project.forge
    settings = repo / ".magnum/settings.toml"
    settings.write_text(settings.read_text().replace('agent = "shell"', 'agent = "claude"') + "fix = true\n")
    git(repo, "commit", "-qam", "claude fixes pull requests")
    fix = ("printf 'def widget():\\n    return 2\\n' > widget.py && git commit -qam 'Return 2' && "
           f"(git push {project.bare} HEAD:refs/heads/sneaky || true)")
    with real_agents(monkeypatch, agent_bin, {"claude": [run_shell(fix), say("Fixed; not pushed.")]}) as servers:
        monkeypatch.setenv("GITHUB_API_URL", forge.url)
        monkeypatch.setenv("GH_TOKEN", TOKEN)
        assert balanced(repo, "ship", "--pr", "--yes").code == 0
        forge.checks(forge.head_sha("feature") or "", Run("tests", "failure", "FAILED test_two - assert 1 == 2"))
        ran = balanced(repo, "engine", "--until-idle")
        assert ran.code == 0, ran.err
        asked = json.dumps(servers.claude.main_requests()[0].body)
    assert "FAILED test_two - assert 1 == 2" in asked and "Do not push" in asked, "the message reached the model"
    assert "a worker does not push" in json.dumps([r.body for r in servers.claude.main_requests()]), \
        "the refused push's reason reached the agent"
    assert git(project.bare, "for-each-ref", "refs/heads/sneaky") == ""
    assert git(repo, "show", "feature:widget.py") == "def widget():\n    return 2"
    assert "Ready to push" in balanced(repo, "board").out
