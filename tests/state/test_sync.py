"""Sharing state between clones: refs and notes pushed and fetched, diverged chains joined."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import cache, notes, refs
from git_balanced.state.sync import sync
from tests.support.builders import git, make_remote, make_repo


def test_two_clones_sync_to_the_same_state(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a")
    bare = make_remote(tmp_path, a)
    git(tmp_path, "clone", "-q", str(bare), "b")
    b = tmp_path / "b"
    ra, rb = Repo.discover(a), Repo.discover(b)
    ref = "refs/balanced/jobs/j1"
    refs.append(ra, ref, "placed", "j1 placed", {"piece": "p"}, state="queued")
    sync(ra, "origin")
    sync(rb, "origin")
    refs.append(ra, ref, "started", "j1 started on a", {"machine": "a"}, state="running")
    refs.append(rb, ref, "landed", "j1 landed from b", {"landed": "abc"}, state="landed")
    sync(ra, "origin")
    sync(rb, "origin")
    sync(ra, "origin")
    sa, sb = cache.read_one(ra, "jobs", "j1"), cache.read_one(rb, "jobs", "j1")
    assert sa is not None and sb is not None
    assert sa["state"] == sb["state"] == "landed"
    assert sa["fields"] == sb["fields"] == {"piece": "p", "machine": "a", "landed": "abc"}
    assert ra.read_ref(ref) == rb.read_ref(ref), "both clones end on the same merge commit"
    parents = git(a, "log", "-1", "--format=%P", ref).split()
    assert len(parents) == 2, "diverged chains were joined by a merge commit"


def test_notes_merge_keeps_both_lines(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a")
    bare = make_remote(tmp_path, a)
    git(tmp_path, "clone", "-q", str(bare), "b")
    b = tmp_path / "b"
    ra, rb = Repo.discover(a), Repo.discover(b)
    head = ra.rev_parse("HEAD")
    assert head
    notes.add_json(ra, notes.LANDINGS, head, {"from": "a"})
    notes.add_json(rb, notes.LANDINGS, head, {"from": "b"})
    sync(ra, "origin")
    sync(rb, "origin")
    sync(ra, "origin")
    for r in (ra, rb):
        got = notes.read_json(r, notes.LANDINGS, head)
        assert sorted(x["from"] for x in got) == ["a", "b"], "both clones' lines kept"
    shown = git(b, "log", "-1", "--notes=balanced", "--format=%N", head)
    assert '"from": "a"' in shown and '"from": "b"' in shown, "git itself reads the merged note"


def test_a_malformed_chain_here_is_set_aside_and_the_remote_one_taken(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a")
    bare = make_remote(tmp_path, a)
    git(tmp_path, "clone", "-q", str(bare), "b")
    ra, rb = Repo.discover(a), Repo.discover(tmp_path / "b")
    ref = "refs/balanced/jobs/j1"
    good = refs.append(ra, ref, "placed", "j1 placed", {"piece": "p"}, state="queued")
    sync(ra, "origin")
    junk = git(tmp_path / "b", "hash-object", "-w", "--stdin", input="junk\n")
    git(tmp_path / "b", "update-ref", ref, junk)
    report = sync(rb, "origin")
    assert report.not_pushed and ref in report.not_pushed, report
    assert rb.read_ref(ref) == good.sha, "the remote's good chain is taken, not merged with the junk"
    assert rb.read_ref("refs/balanced/broken/jobs/j1") == junk, "the junk is kept aside"
    assert git(bare, "rev-parse", ref) == good.sha, "and never pushed"
