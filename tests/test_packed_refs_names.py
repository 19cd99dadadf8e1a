"""A listing finds its packed refs by bisecting their sorted names: the same refs, in the same order, as git's."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import PackedRefs, refs_from_files
from tests.support.builders import git, make_repo


def test_the_packed_refs_of_a_prefix_are_found_among_names_that_sort_around_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    head = git(root, "rev-parse", "HEAD")
    names = ["main-x", "main.x", "main/x", "main/y/z", "main0", "mainz", "mai", "ma/in"]
    git(root, "update-ref", "--stdin", input="".join(f"create refs/heads/b/{n} {head}\n" for n in names))
    git(root, "pack-refs", "--all", "--prune")
    packed = PackedRefs(root / ".git" / "packed-refs")
    for prefix in ("refs/heads/b/main", "refs/heads/b/main/", "refs/heads/b/mai", "refs/heads/b/", "refs/heads/",
                   "refs/heads/b/main/y", "refs/heads/b/nothing/"):
        out = git(root, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
        want = dict(line.split(" ") for line in out.splitlines())
        read = refs_from_files(root / ".git", prefix, packed)
        assert read is not None and list(read.items()) == list(want.items()), prefix
