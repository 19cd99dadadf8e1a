"""One git process where the landing used two or one per ref: the change since a branch forked (git/forkdiff.py)
and which refs hold a commit (git/contains.py), against what the longer way says, in real repositories."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.git.contains import holding
from git_balanced.git.forkdiff import since_fork
from git_balanced.git.loosesize import object_sizes
from tests.support.builders import commit, git, make_repo


def test_the_change_since_the_fork_is_what_merge_base_then_diff_tree_say(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"})
    repo = Repo.discover(lead)
    git(lead, "switch", "-q", "-c", "work")
    commit(lead, {"a.txt": "a on work\n", "c.txt": "sea\n", "b.txt": None}, "work")
    tip = git(lead, "rev-parse", "HEAD")
    git(lead, "switch", "-q", "main")
    commit(lead, {"d.txt": "main moved on\n"}, "main")
    main = git(lead, "rev-parse", "HEAD")
    got = since_fork(repo, main, tip)
    assert got == repo.diff_tree(repo.merge_base(main, tip), tip)
    assert {c.path for c in got or []} == {"a.txt", "b.txt", "c.txt"}
    assert since_fork(repo, tip, main) == repo.diff_tree(repo.merge_base(main, tip), main)
    assert since_fork(repo, tip, git(lead, "rev-parse", "HEAD~1")) == [], "nothing past the fork: empty, not None"
    # Two merge bases (a criss-cross): git cannot say in one step, and the caller asks merge-base.
    git(lead, "switch", "-q", "-c", "x", tip)
    git(lead, "merge", "-q", "--no-edit", main)
    git(lead, "switch", "-q", "-c", "y", main)
    git(lead, "merge", "-q", "--no-edit", tip)
    commit(lead, {"e.txt": "e\n"}, "on y")
    assert since_fork(repo, "x", "y") is None
    unrelated = git(lead, "commit-tree", git(lead, "rev-parse", "HEAD^{tree}"), "-m", "no parent")
    assert since_fork(repo, main, unrelated) is None


def test_the_refs_holding_a_commit_are_those_merge_base_says(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    git(lead, "branch", "at")
    git(lead, "tag", "-a", "-m", "a tag", "tagged")
    commit(lead, {"b.txt": "b\n"}, "on top")
    git(lead, "branch", "side", base)
    git(lead, "switch", "-q", "side")
    commit(lead, {"c.txt": "c\n"}, "beside")
    git(lead, "branch", "before", f"{base}")
    git(lead, "reset", "-q", "--hard", base)
    git(lead, "commit", "-q", "--allow-empty", "-m", "child")
    refs = {"refs/heads/main", "refs/heads/at", "refs/tags/tagged", "refs/heads/side", "refs/heads/gone"}
    on_top = git(lead, "rev-parse", "main")
    assert holding(repo, base, refs) == {"refs/heads/main", "refs/heads/at", "refs/tags/tagged", "refs/heads/side"}
    assert holding(repo, on_top, refs) == {"refs/heads/main"}
    assert holding(repo, on_top, set()) == set()
    assert holding(repo, base, {"refs/heads/before"}) == {"refs/heads/before"}, "only the refs asked of"
    many = {f"refs/heads/made/{i}" for i in range(40_000)}  # more names than one command line holds
    assert holding(repo, base, many | {"refs/heads/at"}) == {"refs/heads/at"}, "asked by prefix, not by name"
    assert holding(repo, "0" * 40, refs) is None, "git could not answer: the caller asks of each ref"


def test_sizes_read_from_loose_files_are_what_git_says_and_packed_ones_are_asked(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    commit(lead, {"big.bin": "x" * 70_000, "small.txt": "small\n", "empty": ""}, "three blobs")
    ids = git(lead, "rev-parse", "HEAD:big.bin", "HEAD:small.txt", "HEAD:empty", "HEAD^{tree}", "HEAD").split()
    said = [int(x) for x in git(lead, "cat-file", "--batch-check=%(objectsize)", input="\n".join(ids) + "\n").split()]
    assert object_sizes(repo, ids + ids[:1]) == said + said[:1]
    git(lead, "repack", "-q", "-a", "-d")  # every one packed now: asked of git
    assert not list((lead / ".git" / "objects").glob("??/*"))
    assert object_sizes(repo, ids) == said and object_sizes(repo, []) == []
