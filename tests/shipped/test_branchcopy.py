"""A branch's own copy of a machine's copy (shipped/branchcopy.py), made and removed with real git."""

from __future__ import annotations

from pathlib import Path

from git_balanced.shipped import runfiles
from git_balanced.shipped.branchcopy import own_copy_ensure, own_copy_path, own_copy_remove
from tests.support.builders import git, make_repo


def test_the_path_is_derived_from_the_copy_and_the_branch_alone(tmp_path: Path) -> None:
    a = own_copy_path(str(tmp_path / "app"), "balanced/x")
    assert a == own_copy_path(str(tmp_path / "app") + "/", "balanced/x")
    assert a.startswith(f"{tmp_path}/.balanced/copies/app-") and a.endswith("-workers/balanced+x"), a
    assert a != own_copy_path(str(tmp_path / "app-1234abcd"), "balanced/x"), "another copy, another folder"
    assert a != own_copy_path(str(tmp_path / "app"), "balanced/y")


def test_a_branchs_copy_borrows_the_copy_and_goes_once_no_worktree_is_left(tmp_path: Path) -> None:
    shared = make_repo(tmp_path / "app", {"a.txt": "a\n"})
    git(shared, "config", "user.name", "Ada Lead")
    base = git(shared, "rev-parse", "HEAD")
    own = own_copy_ensure(str(shared), "balanced/x", runfiles._git)
    assert own == own_copy_path(str(shared), "balanced/x")
    alternates = Path(own, ".git", "objects", "info", "alternates").read_text()
    assert alternates == f"{(shared / '.git' / 'objects').resolve()}\n"
    assert git(own, "config", "user.name") == "Ada Lead", "who commits there, carried from the copy"
    assert git(own, "cat-file", "-t", base) == "commit", "the copy's objects are seen through the alternates"
    assert git(own, "for-each-ref") == "", "none of the copy's refs"
    assert own_copy_ensure(str(shared), "balanced/x", runfiles._git) == own, "found again, not made again"
    wt = tmp_path / "wt"
    git(own, "worktree", "add", "-q", "-b", "balanced/x", str(wt), base)
    assert not own_copy_remove(own), "a worktree of it is registered: it stays"
    git(own, "worktree", "remove", str(wt))
    assert own_copy_remove(own) and not Path(own).exists()


def test_every_carried_key_reads_back_as_the_copy_had_it_whatever_its_characters(tmp_path: Path) -> None:
    """One git process reads what is carried and the config is written in one go: each value must read back
    the same through git (quotes, backslashes, a tab, `#` and `;` that would start a comment unquoted)."""
    shared = make_repo(tmp_path / "app", {"a.txt": "a\n"})
    odd = {"user.name": 'Ada "the lead" \\ Lovelace\t#1; x', "user.email": "ada@example.org",
           "user.signingKey": "/keys/ada key.pub", "gpg.format": "ssh"}
    for key, value in odd.items():
        git(shared, "config", key, value)
    own = own_copy_ensure(str(shared), "balanced/y", runfiles._git)
    for key, value in odd.items():
        assert git(own, "config", "--get", key) == value, key
    assert git(own, "config", "--get", "gc.auto") == "0", "no gc there"
