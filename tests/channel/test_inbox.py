"""The inbox: one ref per lead branch, read oldest first, each message once when followed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from git_balanced.channel.inbox import entries, inbox_ref, post
from git_balanced.git import Repo
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import lead_repo
from tests.support.wait import Lines, wait_until


def test_each_lead_branch_has_its_own_inbox_ref() -> None:
    assert inbox_ref("main") == "refs/balanced/inbox/main"
    assert inbox_ref("team/ada") == "refs/balanced/inbox/team%2Fada", "one ref, not a folder of them"
    assert inbox_ref("50%/x") == "refs/balanced/inbox/50%25%2Fx", "and no two branches share one"


def test_entries_come_oldest_first_and_each_once_to_a_follower(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    assert entries(repo, "main") == [], "nothing heard yet"
    first = post(repo, "main", "first", kind="question", qid="q1")
    post(repo, "team/ada", "elsewhere")
    known: set[str] = set()
    got = entries(repo, "main", known=known)
    assert [(e["text"], e["kind"], e.get("qid"), e["sha"]) for e in got] == [("first", "question", "q1", first)]
    assert entries(repo, "main", known=known) == [], "read once"
    post(repo, "main", "second")
    post(repo, "main", "third")
    assert [e["text"] for e in entries(repo, "main", known=known)] == ["second", "third"], "only what is new"
    everything = entries(repo, "main")
    assert [e["text"] for e in everything] == ["first", "second", "third"]
    assert [e["text"] for e in entries(repo, "main", since=everything[0]["time"])] == ["second", "third"], \
        "since leaves out what came at or before that moment"
    shown = git(repo.root, "log", "--reverse", "--format=%s", inbox_ref("main"))
    assert shown.splitlines() == ["first", "second", "third"], "git log reads the inbox"


def test_the_inbox_command_prints_what_was_heard(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    assert balanced(path, "inbox").out.strip() == "Nothing yet."
    post(Repo.discover(path), "main", "the check passed")
    out = balanced(path, "inbox").out
    assert out.rstrip().endswith("the check passed"), out


def test_inbox_follow_prints_each_message_once(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = Repo.discover(repo)
    post(r, "main", "first word")
    p = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "inbox", "--follow"], cwd=repo,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout is not None
    out = Lines(p.stdout)
    try:
        wait_until(lambda: any("first word" in x for x in out), 30, "what was there to be printed", said=out.copy)
        post(r, "main", "second word")
        post(r, "main", "third word")
        wait_until(lambda: any("third word" in x for x in out), 30, "the new messages", said=out.copy)
        # One more message a later poll prints: by then any message printed twice would show.
        post(r, "main", "fourth word")
        wait_until(lambda: any("fourth word" in x for x in out), 30, "the last message", said=out.copy)
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=10)
    assert out.ended.wait(10), "the follower's output ends with it"
    lines = [x for x in out if "word" in x]
    assert [x.split("  ", 1)[1] for x in lines] == ["first word", "second word", "third word", "fourth word"], out
