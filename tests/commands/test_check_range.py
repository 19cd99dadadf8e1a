"""`git balanced check A..B` resolves each name of the range once, and checks the range's tip."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.commands.check import _tip_of
from git_balanced.git import Repo
from tests.support.builders import commit, git, make_repo


def test_a_range_resolves_each_name_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    base = git(path, "rev-parse", "HEAD")
    commit(path, {"b.txt": "b\n"}, "b")
    tip = commit(path, {"c.txt": "c\n"}, "c")
    repo = Repo(path, path / ".git", path / ".git")
    asked: list[str] = []
    real = Repo.rev_parse
    monkeypatch.setattr(Repo, "rev_parse", lambda self, rev: asked.append(rev) or real(self, rev))
    assert _tip_of(repo, f"{base}..main") == ("main", tip, 1)
    assert sorted(asked) == sorted([base, "main"])
    asked.clear()
    assert _tip_of(repo, "main") == ("main", tip, None) and asked == ["main"]
