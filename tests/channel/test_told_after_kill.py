"""An engine killed (as SIGKILL would) after it told the lead of an event and before it recorded the event: the
line is there once after the next engine's pass, which records the event as it would have."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import process
from git_balanced.channel import inbox
from git_balanced.git import Repo
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan


def test_a_line_told_before_a_kill_is_told_once(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra="attempts = 1\n")
    assert plan(repo, [piece("a", "exit 3")], "--start").code == 0

    r = engine(repo, "--until-idle", crash_at="told-before-recorded")
    assert r.code == 137, r  # it died between the line and the event
    assert inbox_text(repo).count("a did not finish") == 1, "the line comes first"
    [job] = jobs_of(repo, "a")
    assert job["state"] == "running", "the event was not written: the next pass decides it again"

    r = engine(repo, "--until-idle")
    assert r.code == 1 and "a failed: the command exited 3" in r.err, r  # a plan that did not land ends so
    [job] = jobs_of(repo, "a")
    assert job["state"] == "failed", job
    assert inbox_text(repo).count("a did not finish") == 1, inbox_text(repo)


def test_keyed_looks_only_at_the_newest_messages(tmp_path: Path) -> None:
    repo = Repo.discover(lead_repo(tmp_path, check=None))
    inbox.post(repo, "main", "old news", key="old")
    for n in range(inbox.RECENT):
        inbox.post(repo, "main", f"line {n}")
    assert inbox.keyed(repo, "main", "old") is not None, "this process remembers the keys it posted"
    process.forget()  # a new process, as after a crash
    assert inbox.keyed(repo, "main", "old") is None, "a key further back than RECENT messages is not looked for"
    inbox.post(repo, "main", "new news", key="new")
    assert inbox.keyed(repo, "main", "new") is not None
    assert inbox.post(repo, "main", "new news", key="new", again=True) == inbox.keyed(repo, "main", "new")


def test_keyed_posts_walk_the_inbox_once_a_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo.discover(lead_repo(tmp_path, check=None))
    for n in range(20):
        inbox.post(repo, "main", f"line {n}", key=f"k{n}")
    process.forget()  # a new process: what it knows of the inbox it reads once
    reads: list[str] = []
    read_event = inbox.read_event
    monkeypatch.setattr(inbox, "read_event", lambda r, sha: (reads.append(sha), read_event(r, sha))[1])

    first = inbox.post(repo, "main", "told", key="told", again=True)
    assert len(reads) == 20 + 1, "the first keyed post reads the inbox's messages once (and the tip it posts on)"
    assert inbox.post(repo, "main", "told", key="told", again=True) == first, "the same key posts nothing"
    assert len(reads) == 21, "nor reads a thing"
    for n in range(5):
        inbox.post(repo, "main", f"more {n}", key=f"more{n}", again=True)
    assert inbox.post(repo, "main", "line 3", key="k3", again=True) != first
    assert len(reads) == 21 + 5, "later keyed posts read only the tip they post on"
    inbox.post(repo, "main", "plain")  # a line posted unkeyed: read once more, on the next keyed post
    inbox.post(repo, "main", "after", key="after", again=True)
    assert len(reads) == 26 + 1 + 2
    texts = [e["text"] for e in inbox.entries(repo, "main")]
    assert texts.count("told") == 1 and texts.count("line 3") == 1 and "more 4" in texts, texts
