"""A kind's refs as last listed, kept while their folder and packed-refs are unchanged (state/listed.py): what
any writer does to them (git itself included) is seen by the next read; a folder that changed within the last
second is listed and not kept."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from git_balanced import jobs, process
from git_balanced.git import Repo
from git_balanced.state import cache, listed
from tests.support.builders import git, make_repo


def _settle(repo: Repo) -> None:
    """The jobs' folder as if its last change were a minute ago (rather than sleeping a second)."""
    folder = repo.common_dir / "refs" / "balanced" / "jobs"
    old = time.time() - 60
    os.utime(folder, (old, old))


def _kept(repo: Repo) -> Path:
    return repo.state_dir / "cache" / "jobs.listed.json"


def test_a_kept_listing_answers_until_a_writer_changes_the_folder(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    first = jobs.place(repo, {"plan": "p", "piece": "a", "task": "t", "agent": "shell", "run": "true",
                              "machine": "local", "branch": "balanced/a", "lead": "main"})
    assert set(cache.read_all(repo, "jobs")) == {first} and not _kept(repo).exists(), "changed just now: not kept"
    _settle(repo)
    process.forget()
    assert set(cache.read_all(repo, "jobs")) == {first} and _kept(repo).exists()
    kept = json.loads(_kept(repo).read_text())
    assert kept["tips"] == repo.list_refs("refs/balanced/jobs/")
    marked = {**kept, "tips": {**kept["tips"], "refs/balanced/jobs/only-in-the-file": "0" * 40}}
    _kept(repo).write_text(json.dumps(marked, separators=(",", ":")))
    process.forget()
    assert "refs/balanced/jobs/only-in-the-file" in listed.tips(repo, "jobs", str(repo.state_dir / "cache")), \
        "the folder unchanged: the kept list answers, no ref file read"
    _kept(repo).write_text(json.dumps(kept, separators=(",", ":")))
    tip = kept["tips"][f"refs/balanced/jobs/{first}"]
    git(repo.root, "update-ref", "refs/balanced/jobs/made-by-git", tip)  # another writer: git itself
    process.forget()
    assert set(cache.read_all(repo, "jobs")) == {first, "made-by-git"}, "the folder changed: listed again"
    _settle(repo)
    process.forget()
    cache.read_all(repo, "jobs")
    git(repo.root, "pack-refs", "--all")  # packed: loose files gone, packed-refs rewritten
    process.forget()
    assert set(cache.read_live(repo, "jobs")) == {first, "made-by-git"}
    ref = f"refs/balanced/jobs/{first}"
    assert repo.read_ref(ref) == git(repo.root, "rev-parse", ref), "a packed ref read from packed-refs, as git"
    assert repo.read_ref("refs/balanced/jobs/none-such") is None
    git(repo.root, "update-ref", "-d", "refs/balanced/jobs/made-by-git")
    assert set(listed.tips(repo, "jobs", str(repo.state_dir / "cache"))) == {f"refs/balanced/jobs/{first}"}
