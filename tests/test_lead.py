"""The lead's settings as committed: read from git once per commit in a process."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.lead import settings_at
from git_balanced.settings import SETTINGS_PATH
from tests.support.builders import commit, make_repo
from tests.support.cli import forget_process_state


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The revisions the settings file is read at from git from now on."""
    reads: list[str] = []
    show = Repo.show_file

    def counted(self: Repo, rev: str, path: str) -> str | None:
        if path == SETTINGS_PATH:
            reads.append(rev)
        return show(self, rev, path)

    monkeypatch.setattr(Repo, "show_file", counted)
    return reads


def test_settings_are_read_once_per_commit_and_again_when_the_branch_moves(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_repo(tmp_path / "r", {SETTINGS_PATH: "[balanced]\ncap = 3\n"})
    repo = Repo.discover(path)
    reads = counting_reads(monkeypatch)
    assert [settings_at(repo, "main").balanced.cap for _ in range(5)] == [3] * 5
    assert settings_at(repo, "refs/heads/main").balanced.cap == 3
    assert len(reads) == 1, "one read for the commit, however it is named"
    commit(path, {SETTINGS_PATH: "[balanced]\ncap = 5\n"}, "more workers")
    assert settings_at(repo, "main").balanced.cap == 5, "the branch moved: read again"
    assert len(reads) == 2
    forget_process_state()
    settings_at(repo, "main")
    assert len(reads) == 3, "a new process reads it afresh"


def test_the_call_sites_of_one_command_read_the_settings_once(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A command asks at several call sites, each naming the lead's commit its own way (the branch, its ref,
    its tip, HEAD): git is asked once."""
    path = make_repo(tmp_path / "r", {SETTINGS_PATH: "[balanced]\ncap = 3\n"})
    repo = Repo.discover(path)
    reads = counting_reads(monkeypatch)
    tip = repo.rev_parse("refs/heads/main")
    assert tip
    for rev in ("main", "refs/heads/main", tip, "HEAD", "main"):
        assert settings_at(repo, rev).balanced.cap == 3, rev
    assert len(reads) == 1, f"read {len(reads)} times: {reads}"
    settings_at(repo, "main~0")
    assert reads[1:] == ["main~0"], "any other revision is git's to resolve, read as before"
