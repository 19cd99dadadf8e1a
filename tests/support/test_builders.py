from pathlib import Path

from tests.support.builders import commit, git, make_repo


def test_sealed_home_is_private(sealed: Path, tmp_path: Path) -> None:
    import os

    assert os.environ["HOME"] == str(sealed), "HOME is the sealed folder"
    repo = make_repo(tmp_path / "r")
    sha = commit(repo, {"a.txt": "a\n"}, "add a")
    assert git(repo, "log", "-1", "--format=%an %ad", "--date=iso") .startswith("Ada Lead 2026-01-01")
    assert len(sha) == 40
