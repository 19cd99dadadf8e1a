"""The kept readings of committed settings are bounded: the newest KEEP written stay, whatever the history."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced import settings_kept
from git_balanced.git import Repo
from git_balanced.lead import settings_at
from git_balanced.settings import SETTINGS_PATH
from tests.support.builders import commit, make_repo
from tests.support.cli import forget_process_state


def test_a_settings_file_changed_often_leaves_the_newest_readings(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings_kept, "KEEP", 3)
    path = make_repo(tmp_path / "r", {SETTINGS_PATH: "[balanced]\ncap = 1\n"})
    repo = Repo.discover(path)
    where = Path(settings_kept.folder(repo.state_dir))
    where.mkdir(parents=True, exist_ok=True)
    (where / "pre-push.json").write_text("{}\n")  # the pre-push hook's: not a reading, never pruned
    for cap in range(1, 7):
        if cap > 1:
            commit(path, {SETTINGS_PATH: f"[balanced]\ncap = {cap}\n"}, f"cap {cap}")
        assert settings_at(repo, "main").balanced.cap == cap
        newest = max(readings(where), key=os.path.getmtime)
        os.utime(newest, ns=(cap * 10**9, cap * 10**9))  # the order written, whatever the clock's grain
    kept = sorted(readings(where), key=os.path.getmtime)
    assert len(kept) == 3 and (where / "pre-push.json").exists()
    forget_process_state()
    assert settings_at(repo, "main").balanced.cap == 6, "the newest is read back"
    assert settings_kept.prune(repo.state_dir, keep=1) == 2
    assert readings(where) == [kept[-1]] and (where / "pre-push.json").exists()


def readings(where: Path) -> list[Path]:
    return [p for p in where.iterdir() if p.name != "pre-push.json"]
