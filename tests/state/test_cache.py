"""The cache of folded states in `.git/balanced/cache/`, keyed by each ref's tip."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import cache, refs
from tests.support.builders import git, make_repo


def test_cache_is_keyed_by_tip(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", state="queued")
    assert cache.read_all(repo, "jobs")["a"]["state"] == "queued"
    refs.append(repo, "refs/balanced/jobs/a", "started", "a started", state="running")
    assert cache.read_all(repo, "jobs")["a"]["state"] == "running", "a moved tip is never served stale"
    git(repo.root, "update-ref", "-d", "refs/balanced/jobs/a")
    assert cache.read_all(repo, "jobs") == {}, "a deleted ref leaves the cache"
