"""`ship --pr` pushes the lead's branch to its own branch on a real bare remote and opens its pull request on
the scripted forge; `review` and the board show it; the token is nowhere but in the requests' header."""

from __future__ import annotations

import json

from tests.forge.conftest import Project
from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.forge import TOKEN, Run


def test_ship_pr_pushes_opens_then_reuses_and_shows_the_pull_request(project: Project) -> None:
    repo, forge = project.repo, project.forge
    ran = balanced(repo, "ship", "--pr", "--yes", "--draft")
    assert ran.code == 0, ran.err
    head = git(repo, "rev-parse", "feature")
    assert git(project.bare, "rev-parse", "refs/heads/feature") == head, "the branch went to its own branch"
    pr = forge.pulls[1]
    assert (pr["head"]["ref"], pr["base"]["ref"], pr["draft"], pr["title"]) == ("feature", "main", True,
                                                                                "Add the widget")
    assert "Check: passed (`test ! -e broken.txt`" in pr["body"] and "from `feature` into `main`" in pr["body"]
    assert "opened pull request #1 (" in ran.out
    assert git(repo, "log", "-1", "--format=%s", "refs/balanced/prs/1") == "Pull request #1 opened: Add the widget"

    forge.checks(head, Run("tests", "failure", "FAILED test_widget"))
    commit(repo, {"more.py": "x = 1\n"}, "More")
    again = balanced(repo, "ship", "--pr", "--yes")
    assert again.code == 0, again.err
    assert len(forge.pulls) == 1 and "updated pull request #1" in again.out, "the open one is reused"
    assert forge.head_sha("feature") == git(repo, "rev-parse", "feature")
    events = git(repo, "log", "--format=%s", "refs/balanced/prs/1").splitlines()
    assert events[0] == "Pull request #1: pushed feature again"

    forge.checks(forge.head_sha("feature") or "", Run("tests", "failure", "FAILED again"))
    forge.review(1, "CHANGES_REQUESTED", "Not yet.")
    review = json.loads(balanced(repo, "review", "--json").out)
    assert [(p["number"], p["state"], p["base"], p["checks"], p["decision"]) for p in review["prs"]] == \
        [(1, "open", "main", "failing", "changes requested")], "review looks at the forge, and sends nothing"
    assert "Pull request #1 open · checks failing · changes requested" in balanced(repo, "review").out
    assert not repo.joinpath(".git/refs/balanced/plans").exists()
    board = balanced(repo, "board").out
    assert "⇅ pull request #1 open" in board and forge.url + "/ada/widgets/pull/1" in board

    everything = "\n".join([ran.out, ran.err, again.out, again.err, board, json.dumps(review),
                            git(repo, "log", "--all", "-p", "--format=%B"),
                            git(repo, "notes", "list") if (repo / ".git/refs/notes").exists() else "",
                            git(repo, "config", "--list")])
    everything += "".join(p.read_text(errors="replace") for p in (repo / ".git").rglob("*")
                          if p.is_file() and p.stat().st_size < 1 << 20)
    assert TOKEN not in everything, "the token is in no output, ref, note, config or file of the repository"
    assert all(s.authorized for s in forge.seen), "yet every request carried it"
    assert not any(TOKEN.encode() in b for b in forge.bodies)


def test_ship_pr_refuses_clearly_without_a_token_or_a_repository(project: Project) -> None:
    repo = project.repo
    env = {"GH_TOKEN": None, "GITHUB_TOKEN": None, "PATH": "/usr/bin:/bin"}  # no gh on this PATH
    ran = balanced(repo, "ship", "--pr", "--yes", env=env)
    if ran.code == 0:
        raise AssertionError("shipped without a token")
    assert "No GitHub token" in ran.err and "gh auth login" in ran.err and "Traceback" not in ran.err
    assert git(project.bare, "for-each-ref", "refs/heads/feature") == "", "nothing was pushed"
    (repo / ".magnum/settings.toml").write_text('[worktree]\ncheck = "test ! -e broken.txt"\n')
    git(repo, "commit", "-qam", "no [pr] repository")
    ran = balanced(repo, "ship", "--pr", "--yes")
    assert ran.code == 1 and "names no repository on a forge" in ran.err and 'repository = "owner/name"' in ran.err
    git(repo, "switch", "-q", "main")
    ran = balanced(repo, "ship", "--pr", "--yes")
    assert ran.code == 1 and "main would be its own base" in ran.err and "git switch -c feature" in ran.err


def test_a_push_the_remote_refuses_opens_no_pull_request_and_says_the_remotes_words(project: Project) -> None:
    hook = project.bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'feature is frozen until Monday'\nexit 1\n")
    hook.chmod(0o755)
    ran = balanced(project.repo, "ship", "--pr", "--yes")
    assert ran.code == 1 and "The push to origin failed; no pull request was opened:" in ran.err, ran.err
    assert "feature is frozen until Monday" in ran.err and "git balanced ship --pr" in ran.err
    assert project.forge.pulls == {}, "no pull request was opened"
    assert git(project.repo, "for-each-ref", "refs/balanced/prs/") == ""
