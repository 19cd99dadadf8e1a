"""The real headless lead fixes its pull request: Claude Code started with `lead start` against the scripted model
server, `[pr] fix = true`, and the scripted forge's CI failing the shipped head. The engine `lead start` started
sends the failed check to the lead's session (its inbox, its next turn); the lead plans a worker that fixes it
(whose push is refused); the fix waits as `Ready to push`, `not-now` leaves it, and `ship --pr` pushes it: the
forge sees the new head and a passing run."""

from __future__ import annotations

import json

import pytest

from tests.forge.conftest import Project
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.forge import TOKEN, Forge, Run
from tests.support.model_server import call_tool, say
from tests.support.plans import piece
from tests.support.real_agents import bodies, real_agents
from tests.support.wait import wait_until

FAILED = "FAILED tests/test_widget.py::test_two - assert 1 == 2"


def ci(forge: Forge, sha: str) -> list[Run]:
    """The forge's CI: the widget must return 2."""
    ok = "return 2" in (forge.show(sha, "widget.py") or "")
    return [Run("tests", "success" if ok else "failure", "" if ok else FAILED)]


def test_the_headless_leads_session_gets_the_failed_check_and_its_fix_is_shipped(
        project: Project, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, forge = project.repo, project.forge
    settings = repo / ".magnum/settings.toml"
    settings.write_text(settings.read_text() + "fix = true\n")
    git(repo, "commit", "-qam", "fix pull requests")
    forge.ci = ci
    fix = piece("fix-widget", "printf 'def widget():\\n    return 2\\n' > widget.py && "
                              f"(git push {project.bare} HEAD:refs/heads/sneaky || true)")
    turns = [say("Nothing to do until news comes."),
             call_tool("plan", {"task": "Fix pull request #1's failed check", "pieces": [fix]}),
             say("A worker fixes it; I do not push.")]
    with real_agents(monkeypatch, agent_bin, {"claude": turns}) as servers:
        monkeypatch.setenv("GITHUB_API_URL", forge.url)
        monkeypatch.setenv("GH_TOKEN", TOKEN)
        assert balanced(repo, "ship", "--pr", "--yes").code == 0
        shipped = forge.head_sha("feature")
        started = balanced(repo, "lead", "start", "--agent", "claude", "Watch the pull request.")
        assert started.code == 0, started.err
        try:
            def board() -> str:
                return balanced(repo, "board").out

            wait_until(lambda: "Ready to push" in board(), 300, "the lead's fix to wait as Ready to push",
                       said=lambda: board() + git(repo, "log", "--format=%s", "refs/balanced/prs/1"))
        finally:
            balanced(repo, "lead", "stop")
            balanced(repo, "engine", "--stop")
        heard = [b for b in bodies(servers.claude) if FAILED in b]
        assert heard and "Do not push" in heard[0], "the failed check reached the lead's model as a turn"
        events = git(repo, "log", "--format=%s", "refs/balanced/prs/1").splitlines()
        assert "Pull request #1: checks failed, sent to its session (lead)" in events, events
        assert events[0].startswith("Pull request #1: fixed by its session, ready to push ("), events
        assert git(repo, "show", "feature:widget.py") == "def widget():\n    return 2", "the fix is on the branch"
        assert git(project.bare, "for-each-ref", "refs/heads/sneaky") == "", "the worker's push was refused"
        assert forge.head_sha("feature") == shipped, "nothing was pushed yet"

        declined = balanced(repo, "not-now", "-m", "after lunch")
        assert declined.code == 0, declined.err
        assert forge.head_sha("feature") == shipped and "Ready to push" not in balanced(repo, "board").out
        pushed = balanced(repo, "ship", "--pr", "--yes")
        assert pushed.code == 0, pushed.err
        assert "updated pull request #1" in pushed.out, pushed.out
    head = forge.head_sha("feature")
    assert head == git(repo, "rev-parse", "feature") != shipped, "the forge sees the new head"
    assert [r.conclusion for r in forge._runs(head or "")] == ["success"], "and a passing run"
    assert TOKEN not in json.dumps(bodies(servers.claude)), "the token never reached the model"
