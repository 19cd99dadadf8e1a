"""The cache of folded states in `.git/balanced/cache/`, keyed by each ref's tip."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import process
from git_balanced.git import Repo
from git_balanced.state import cache, cachefile, refs
from tests.support.builders import git, make_repo


def test_cache_is_keyed_by_tip(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", state="queued")
    assert cache.read_all(repo, "jobs")["a"]["state"] == "queued"
    refs.append(repo, "refs/balanced/jobs/a", "started", "a started", state="running")
    assert cache.read_all(repo, "jobs")["a"]["state"] == "running", "a moved tip is never served stale"
    git(repo.root, "update-ref", "-d", "refs/balanced/jobs/a")
    assert cache.read_all(repo, "jobs") == {}, "a deleted ref leaves the cache"


def test_a_save_appends_what_changed_and_another_reader_sees_it(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    for name in ("a", "b", "c"):
        refs.append(repo, f"refs/balanced/jobs/{name}", "placed", f"{name} placed", state="queued")
    cache.read_all(repo, "jobs")
    snapshot = repo.state_dir / "cache" / "jobs.json"
    journal = repo.state_dir / "cache" / "jobs.log"
    before, logged = snapshot.stat(), journal.stat().st_size
    refs.append(repo, "refs/balanced/jobs/b", "started", "b started", state="running")
    assert cache.read_all(repo, "jobs")["b"]["state"] == "running"
    after = snapshot.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), "the snapshot is not rewritten"
    assert journal.stat().st_size > logged, "the changed entry is appended to the journal"
    process.forget()  # as a new process: the snapshot, then the journal on top
    assert {n: s["state"] for n, s in cache.read_all(repo, "jobs").items()} == {
        "a": "queued", "b": "running", "c": "queued"}


def test_a_long_journal_becomes_a_new_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", state="queued")
    cache.read_all(repo, "jobs")
    snapshot = repo.state_dir / "cache" / "jobs.json"
    first = snapshot.stat().st_ino
    monkeypatch.setattr(cachefile, "JOURNAL_FLOOR", 0)  # every append outgrows it
    monkeypatch.setattr(cachefile, "JOURNAL_SHARE", 0.0)
    refs.append(repo, "refs/balanced/jobs/a", "started", "a started", state="running")
    assert cache.read_all(repo, "jobs")["a"]["state"] == "running"
    assert snapshot.stat().st_ino != first, "written whole again"
    assert (repo.state_dir / "cache" / "jobs.log").read_text().count("\n") == 1, "a journal of its header alone"
    process.forget()
    assert cache.read_all(repo, "jobs")["a"]["state"] == "running"


def test_a_stale_journal_is_passed_over(tmp_path: Path) -> None:
    """A journal that follows another snapshot (one written whole since) adds nothing."""
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", state="queued")
    cache.read_all(repo, "jobs")
    journal = repo.state_dir / "cache" / "jobs.log"
    journal.write_text('{"snapshot": [1, 2, 3]}\n["refs/balanced/jobs/a", "0000", {"state": "landed"}]\n')
    process.forget()
    assert cache.read_all(repo, "jobs")["a"]["state"] == "queued"


def test_read_written_reads_only_the_refs_named(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", state="queued")
    refs.append(repo, "refs/balanced/jobs/b", "placed", "b placed", state="queued")
    cache.read_all(repo, "jobs")
    mark = refs.write_mark()
    refs.append(repo, "refs/balanced/jobs/a", "started", "a started", state="running")
    names = refs.written_since(repo, mark, "refs/balanced/jobs/")
    assert names == ["a"]
    got = cache.read_written(repo, "jobs", names)
    assert {n: (s or {}).get("state") for n, s in got.items()} == {"a": "running"}
    git(repo.root, "update-ref", "-d", "refs/balanced/jobs/a")
    assert cache.read_written(repo, "jobs", ["a"]) == {"a": None}, "a ref gone reads as None"


def test_a_snapshot_most_of_whose_entries_are_gone_is_written_again(tmp_path: Path) -> None:
    """After `gc` removed most refs, the cache is not a big snapshot undone by its journal at every read."""
    repo = Repo.discover(make_repo(tmp_path / "r"))
    for name in ("a", "b", "c", "d"):
        refs.append(repo, f"refs/balanced/jobs/{name}", "placed", f"{name} placed", state="queued")
    cache.read_all(repo, "jobs")
    snapshot = repo.state_dir / "cache" / "jobs.json"
    first = snapshot.stat().st_ino
    for name in ("a", "b", "c"):
        git(repo.root, "update-ref", "-d", f"refs/balanced/jobs/{name}")
    assert list(cache.read_all(repo, "jobs")) == ["d"]
    assert snapshot.stat().st_ino != first, "written whole again"
    process.forget()
    assert list(cache.read_all(repo, "jobs")) == ["d"]
