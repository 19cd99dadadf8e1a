"""The one door to git (git_balanced/git.py): the reads done in-process, against real repositories."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from tests.support.builders import git, make_repo


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
