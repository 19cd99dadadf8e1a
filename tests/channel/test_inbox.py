"""The inbox: one ref per lead branch, read oldest first, each message once when followed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.channel.inbox import entries, inbox_ref, post
from git_balanced.git import Repo
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import lead_repo
from tests.support.wait import Lines, interruptible, wait_until


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
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=interruptible)
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


def test_a_malformed_inbox_ref_is_set_aside_and_the_message_still_reaches_the_lead(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = lead_repo(tmp_path)
    repo = Repo.discover(path)
    junk = git(path, "hash-object", "-w", "--stdin", input="not an event\n").strip()
    git(path, "update-ref", inbox_ref("main"), junk)
    res = balanced(path, "inbox")
    assert res.code == 0 and "Traceback" not in res.err, res.err
    assert "refs/balanced/inbox/main is malformed (it points at a blob, not a commit); it is set aside as " \
        "refs/balanced/broken/inbox/main" in res.err, res.err
    git(path, "update-ref", inbox_ref("main"), junk)  # and once more, for a post to find
    post(repo, "main", "the check passed")
    said = capsys.readouterr().err
    assert "its old tip is kept as refs/balanced/broken/inbox/main and a new inbox started" in said, said
    assert [e["text"] for e in entries(Repo.discover(path), "main")] == ["the check passed"]
    kept = "refs/balanced/broken/inbox/main"
    assert git(path, "rev-parse", kept).strip() == junk, "the old tip is kept, not lost"
    doctor = balanced(path, "doctor", "--json")
    listed = {r["ref"]: r for r in json.loads(doctor.out)["malformed_refs"]}
    assert kept in listed and listed[kept]["tip"] == junk, doctor.out
    fixed = balanced(path, "doctor", "--fix", "--yes")
    assert fixed.code == 0, fixed.err
    assert git(path, "for-each-ref", "refs/balanced/broken/").strip() == ""
    assert [e["text"] for e in entries(Repo.discover(path), "main")] == ["the check passed"]
