"""The one door to git (git_balanced/git.py): the reads done in-process, against real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_balanced.git import Repo
from git_balanced.state import refs
from tests.support.builders import commit, git, make_repo


def test_show_file_reads_a_branch_a_commit_a_tag_and_any_revision(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {".magnum/settings.toml": "x = 1\né\n", "f": "blob\n"})
    git(root, "tag", "-a", "v1", "-m", "a tag")
    head = git(root, "rev-parse", "HEAD")
    repo = Repo.discover(root)
    for rev in ("main", head, "refs/tags/v1", "refs/heads/main", "HEAD", "main~0"):
        assert repo.show_file(rev, ".magnum/settings.toml") == "x = 1\né\n", rev
    assert repo.show_file("main", "missing") is None, "no such file"
    assert repo.show_file("main", "f/under-a-file") is None, "a path through a file"
    assert repo.show_file("main", ".magnum") is None, "a folder is not a file"
    assert repo.show_file("no-such-branch", "f") is None, "no such revision"
    assert repo.show_file("main~1", "f") is None, "a revision before the first commit"


def test_ref_names_lists_loose_and_packed_refs(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f": "x\n"})
    head = git(root, "rev-parse", "HEAD")
    for ref in ("refs/remotes/alpha/balanced/p1", "refs/remotes/beta/balanced/x/y"):
        git(root, "update-ref", ref, head)
    git(root, "pack-refs", "--all")
    git(root, "update-ref", "refs/remotes/gamma/balanced/p1", head)
    repo = Repo.discover(root)
    assert repo.ref_names("refs/remotes/") == ["refs/remotes/alpha/balanced/p1", "refs/remotes/beta/balanced/x/y",
                                               "refs/remotes/gamma/balanced/p1"]
    assert repo.ref_names("refs/nothing/") == []


def test_a_first_ref_in_a_folder_another_writer_just_made_is_written(tmp_path: Path, monkeypatch) -> None:
    """Two writers making the first refs of one folder at once: dulwich checks that the reflog folder is missing,
    the other writer makes it, and dulwich's bare mkdir fails. Our swap makes the folder first."""
    import os.path

    import dulwich.repo

    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    head = repo.rev_parse("HEAD")
    assert head
    folder = str(repo.common_dir / "logs" / "refs" / "balanced" / "jobs")
    real_exists = os.path.exists

    def racing_exists(p: object) -> bool:
        if str(p) == folder and not real_exists(folder):  # the other writer makes it just after this check
            os.makedirs(folder)
            return False
        return real_exists(p)  # type: ignore[arg-type]

    monkeypatch.setattr(dulwich.repo.os.path, "exists", racing_exists)
    assert repo.cas_ref("refs/balanced/jobs/a", head, None)
    monkeypatch.undo()
    assert git(path, "rev-parse", "refs/balanced/jobs/a") == head


def test_the_branch_and_a_branch_tip_read_without_git_agree_with_git(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    repo = Repo.discover(lead)
    assert repo.current_branch() == "main"
    tip = git(lead, "rev-parse", "HEAD")
    assert repo.rev_parse("refs/heads/main") == tip
    assert repo.rev_parse("refs/heads/nothing") is None
    first = commit(lead, {"b.txt": "b\n"})
    assert repo.rev_parse("refs/heads/main") == first, "read again, never kept"
    assert repo.rev_parse("refs/heads/main~1") == tip, "rev syntax still goes to git"
    git(lead, "pack-refs", "--all")
    assert repo.rev_parse("refs/heads/main") == first, "a packed branch"
    git(lead, "tag", "main")  # a tag of the same name: git would shorten the branch to heads/main
    assert repo.current_branch() == "main"
    git(lead, "checkout", "-q", "--detach")
    assert repo.current_branch() is None
    git(lead, "checkout", "-q", "-b", "feat/x-1")
    assert repo.current_branch() == "feat/x-1"
    wt = tmp_path / "wt"
    git(lead, "worktree", "add", "-q", "-b", "other", str(wt))
    assert Repo.discover(wt).current_branch() == "other"
    assert Repo.discover(wt).rev_parse("refs/heads/feat/x-1") == first


def test_one_listing_answers_as_a_listing_per_kind_does_and_a_write_lists_again(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    for ref in ("refs/balanced/jobs/j1", "refs/balanced/jobs/j2", "refs/balanced/plans/p1",
                "refs/balanced/inbox/main", "refs/balanced/inbox/main%2Fui", "refs/balanced/jobsx/odd"):
        refs.append(repo, ref, "note", "a note")
    prefixes = ("refs/balanced/jobs/", "refs/balanced/jobs", "refs/balanced/plans/", "refs/balanced/questions/",
                "refs/balanced/inbox/main", "refs/balanced/inbox/mai", "refs/balanced/", "refs/heads/")
    each = {prefix: repo.list_refs(prefix) for prefix in prefixes}
    calls: list[tuple[str, ...]] = []
    real = repo.git

    def counted(*args: str, **kw: Any) -> str:
        calls.append(args)
        return real(*args, **kw)

    repo.git = counted  # type: ignore[method-assign]
    with repo.listing_once():
        for prefix in prefixes:
            assert repo.list_refs(prefix) == each[prefix], prefix
        assert len(repo.list_refs("refs/balanced/")) == 6
        assert [c for c in calls if c[0] == "for-each-ref"] == [
            ("for-each-ref", "--format=%(objectname) %(refname)", "refs/balanced/"),
            ("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/")], "one listing for every kind"
        refs.append(repo, "refs/balanced/jobs/j3", "note", "written within")  # through this object: seen at once
        assert set(repo.list_refs("refs/balanced/jobs/")) == {f"refs/balanced/jobs/j{i}" for i in (1, 2, 3)}
        tip = repo.read_ref("refs/balanced/plans/p1")
        git(repo.root, "update-ref", "-d", "refs/balanced/plans/p1")  # another writer: seen at the next listing
        assert "refs/balanced/plans/p1" in repo.list_refs("refs/balanced/plans/")
        repo.run("update-ref", "refs/balanced/plans/p2", tip or "")  # a git command that writes: listed again
        assert set(repo.list_refs("refs/balanced/plans/")) == {"refs/balanced/plans/p2"}
    calls.clear()
    repo.list_refs("refs/balanced/jobs/")
    repo.list_refs("refs/balanced/jobs/")
    assert len(calls) == 2, "outside the block, every listing asks git"
