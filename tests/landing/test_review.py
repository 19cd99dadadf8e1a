"""review, correct and ship against a real bare remote, with pieces landed by a real engine run."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time
from pathlib import Path

import pytest

from git_balanced.channel.inbox import entries
from git_balanced.commands.board import collect, render
from git_balanced.lead import open_lead
from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.cli import balanced

SETTINGS = '[worktree]\ncheck = "test ! -e broken.txt"\n[balanced]\nagent = "shell"\n'
PLAN = """\
task: Two files
pieces:
  - id: alpha
    task: Write alpha.
    agent: shell
    run: "printf 'a\\\\n' > alpha.txt"
  - id: beta
    task: Write beta.
    agent: shell
    run: "printf 'b1\\\\nb2\\\\n' > beta.txt"
"""


@pytest.fixture
def shipped(tmp_path: Path) -> tuple[Path, Path]:
    """A lead with an upstream on a bare remote, and two pieces landed since it was pushed."""
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n", ".magnum/settings.toml": SETTINGS})
    bare = make_remote(tmp_path, repo)
    git(repo, "branch", "--set-upstream-to=origin/main")
    assert balanced(repo, "allow", "--yes").code == 0
    (tmp_path / "plan.yaml").write_text(PLAN)
    assert balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start").code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    assert git(repo, "show", "main:beta.txt") == "b1\nb2", "both pieces landed"
    return repo, bare


def test_review_sums_up_what_would_ship(shipped: tuple[Path, Path]) -> None:
    repo, _ = shipped
    commits = int(git(repo, "rev-list", "--count", "origin/main..main"))
    ran = balanced(repo, "review", "--json")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert (data["commits"], data["files"], data["insertions"], data["deletions"]) == (commits, 2, 3, 0)
    assert data["summary"] == f"{commits} commits · 2 files · +3 \u22120"
    # The two workers run at once, so either may land first: the list follows the order they landed in.
    order = git(repo, "rev-list", "--reverse", "--first-parent", "origin/main..main").split()
    assert sorted(p["piece"] for p in data["pieces"]) == ["alpha", "beta"]
    assert [order.index(p["commit"]) for p in data["pieces"]] == sorted(order.index(p["commit"])
                                                                         for p in data["pieces"]), "oldest first"
    assert data["check"]["state"] == "passed" and data["check"]["ran"] is False, "the landing's note is shown"
    text = balanced(repo, "review").out
    assert text.splitlines()[0] == f"main against origin/main: {commits} commits · 2 files · +3 \u22120"
    assert "● alpha" in text and "● beta" in text
    assert "Check: passed (`test ! -e broken.txt`" in text and "from its note of" in text


def test_review_runs_the_check_on_an_unchecked_tree(shipped: tuple[Path, Path]) -> None:
    repo, _ = shipped
    commit(repo, {"broken.txt": "oops\n"}, "A hand-made commit")
    ran = balanced(repo, "review", "--json")
    assert ran.code == 1, "a failing check fails the review"
    check = json.loads(ran.out)["check"]
    assert (check["state"], check["ran"], check["code"]) == ("failed", True, 1)
    again = json.loads(balanced(repo, "review", "--json").out)["check"]
    assert again["ran"] is False, "the same tree is answered from its note the second time"
    refused = balanced(repo, "ship", "--yes")
    assert refused.code == 1 and "The check fails on main's tree, so it is not shipped." in refused.err
    assert git(repo, "rev-parse", "origin/main") != git(repo, "rev-parse", "main")


def test_ship_without_a_terminal_pushes_nothing_and_says_how(shipped: tuple[Path, Path]) -> None:
    repo, bare = shipped
    before = git(bare, "rev-parse", "main")
    ran = balanced(repo, "ship")
    assert ran.code == 1
    assert "Steps:\n  1. git push origin refs/heads/main:refs/heads/main" in ran.out
    assert "Nothing was pushed: there is no terminal to ask on, and --yes was not given." in ran.err
    assert "hint: run `git balanced ship --yes` to push." in ran.err
    assert git(bare, "rev-parse", "main") == before, "the remote did not move"


def test_ship_yes_pushes_to_the_remote(shipped: tuple[Path, Path]) -> None:
    repo, bare = shipped
    ran = balanced(repo, "ship", "--yes")
    assert ran.code == 0, ran.err
    assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main")
    assert "Pushed main to origin/main:" in ran.out
    said = [e["text"] for e in entries(open_lead(str(repo)).repo, "main")]
    assert any(t.startswith("Shipped main to origin/main:") for t in said)
    again = balanced(repo, "ship", "--yes")
    assert again.code == 0 and "Nothing to ship: origin/main has everything main has." in again.out


def ship_on_a_terminal(repo: Path, answer: str) -> tuple[int, str]:
    """`git balanced ship` with stdin and stdout on a pseudo-terminal, typing `answer` at its question."""
    main, child = pty.openpty()
    proc = subprocess.Popen(["git", "balanced", "ship"], cwd=repo, stdin=child, stdout=child, stderr=child,
                            env=dict(os.environ), close_fds=True)
    os.close(child)
    seen, typed = b"", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if not typed and b"[y/N]" in seen:
            os.write(main, answer.encode() + b"\n")
            typed = True
    os.close(main)
    return proc.wait(30), seen.decode(errors="replace")


def test_ship_asks_on_a_terminal_and_pushes_only_on_yes(shipped: tuple[Path, Path]) -> None:
    repo, bare = shipped
    before = git(bare, "rev-parse", "main")
    code, out = ship_on_a_terminal(repo, "n")
    assert "Push main to origin/main? [y/N]" in out and "Nothing was pushed." in out
    assert code == 1 and git(bare, "rev-parse", "main") == before
    code, out = ship_on_a_terminal(repo, "y")
    assert code == 0, out
    assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main")


def test_ship_refuses_when_the_upstream_moved_on(shipped: tuple[Path, Path], tmp_path: Path) -> None:
    repo, bare = shipped
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    commit(other, {"theirs.txt": "t\n"}, "Someone else's commit")
    git(other, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    ran = balanced(repo, "ship", "--yes")
    assert ran.code == 1 and "origin/main has 1 commit that main lacks" in ran.err
    assert "git pull" in ran.err


def test_review_needs_an_upstream(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    ran = balanced(repo, "review")
    assert ran.code == 1 and "main has no upstream on a remote" in ran.err
    assert "git branch --set-upstream-to=origin/main" in ran.err


def test_corrections_are_counted_on_the_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "lead")
    ran = balanced(repo, "correct", "Ask before adding a dependency.")
    assert ran.code == 0 and "Corrected once" in ran.out, ran.err
    lead = open_lead(str(repo))
    assert "Corrected once" in render(collect(lead))
    said = [e["text"] for e in entries(lead.repo, "main")]
    assert "You were corrected: Ask before adding a dependency." in said, "the lead hears it"
    balanced(repo, "correct", "Keep the pieces small.")
    assert "Corrected twice" in render(collect(lead))
    balanced(repo, "correct", "Run the check before you say it passes.")
    assert "Corrected 3 times" in render(collect(lead))
    blank = balanced(repo, "correct", "  ")
    assert blank.code == 1 and "A correction needs some text." in blank.err
