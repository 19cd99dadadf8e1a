"""`[balanced] check_slots`: as many as this machine's cores when the settings do not say (0), and one slot, the
serial queue, still there for a check that cannot run twice at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.landing.queue import MOST_SLOTS, Queue, slots_of
from git_balanced.lead import Lead
from tests.support.builders import make_repo

CORES = max(1, min(MOST_SLOTS, os.cpu_count() or 1))


def _queue(tmp_path: Path, settings: str) -> Queue:
    repo = make_repo(tmp_path / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": settings})
    return Queue(Lead(Repo.discover(str(repo)), "main"))


def test_zero_is_the_cores_and_a_number_is_itself() -> None:
    assert slots_of(0) == CORES
    assert [slots_of(n) for n in (1, 3, MOST_SLOTS)] == [1, 3, MOST_SLOTS]


@pytest.mark.parametrize("settings, slots", [
    ('[worktree]\ncheck = "true"\n', CORES),
    ('[worktree]\ncheck = "true"\n[balanced]\ncheck_slots = 0\n', CORES),
    ('[worktree]\ncheck = "true"\n[balanced]\ncheck_slots = 1\n', 1),
    ('[worktree]\ncheck = "true"\n[balanced]\ncheck_slots = 3\n', 3),
])
def test_a_landing_runs_on_the_committed_slots_or_the_cores(tmp_path: Path, settings: str, slots: int) -> None:
    assert _queue(tmp_path, settings).slots == slots
