"""What `ship --pr` and the fixing say when they cannot go on, each through the command line: a branch with no
remote, a base the remote lacks, nothing to open a pull request with, and a fixing session that ended without
a fix (the trouble is then yours, and the board says why)."""

from __future__ import annotations

import json

from tests.forge.conftest import SETTINGS, Project
from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced
from tests.support.forge import Run


def test_a_branch_without_a_remote_is_refused_naming_the_command_that_adds_one(project: Project) -> None:
    lone = make_repo(project.repo.parent / "lone", {"README.md": "sample\n", ".magnum/settings.toml": SETTINGS})
    git(lone, "switch", "-q", "-c", "feature")
    commit(lone, {"widget.py": "x = 1\n"}, "Add the widget")
    assert balanced(lone, "allow", "--yes").code == 0
    ran = balanced(lone, "ship", "--pr", "--yes")
    assert ran.code == 1 and "Traceback" not in ran.err, ran.err
    assert "error: feature has no remote to push to, so no pull request can be opened." in ran.err
    assert "git remote add origin URL" in ran.err


def test_a_base_the_remote_lacks_and_nothing_to_ship_are_refused(project: Project) -> None:
    repo = project.repo
    ran = balanced(repo, "ship", "--pr", "--yes", "--base", "develop")
    assert ran.code == 1, ran.err
    assert "error: origin has no branch develop here, so there is nothing to open a pull request into." in ran.err
    assert "`git fetch origin` first" in ran.err
    git(repo, "reset", "-q", "--hard", "origin/main")
    ran = balanced(repo, "ship", "--pr", "--yes")
    assert ran.code == 1, ran.err
    assert "error: Nothing to open a pull request with: origin/main has everything feature has." in ran.err
    assert "land some work on the lead's branch first" in ran.err
    assert project.forge.pulls == {} and git(project.bare, "for-each-ref", "refs/heads/feature") == ""


def test_a_fixing_session_that_ends_without_a_fix_hands_the_trouble_to_you(project: Project) -> None:
    repo, forge = project.repo, project.forge
    settings = repo / ".magnum/settings.toml"
    settings.write_text(settings.read_text().replace('agent = "shell"\n', 'agent = "shell"\nattempts = 1\n')
                        + 'fix = true\nrun = "echo cannot fix it; exit 3"\n')
    git(repo, "commit", "-qam", "a fixer that gives up")
    forge.ci = lambda forge, sha: [Run("tests", "failure", "FAILED test_two")]
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 1 and "fix-pr-1 failed: the command exited 3: cannot fix it" in ran.err, ran.err
    last = git(repo, "log", "-1", "--format=%s", "refs/balanced/prs/1")
    assert last == "Pull request #1: its session ended without a fix", last
    why = json.loads(git(repo, "show", "refs/balanced/prs/1:event.json"))["data"]["why"]
    assert why.startswith("its session ended without a fix (job ") and why.endswith(": failed)"), why
    board = balanced(repo, "board").out
    assert f"Checks failed · yours: {why}" in board, board
    assert "Ready to push" not in board
