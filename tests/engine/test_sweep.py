"""The sweeper that cleans up after landed workers off the pass: a stopped engine waits for it a moment only."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from git_balanced.engine import sweep
from git_balanced.lead import open_lead
from tests.support.plans import lead_repo


def test_a_cleanup_that_hangs_holds_a_stop_a_moment_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    cleaned: list[str] = []

    def slow(lead: object, jobs: list) -> None:  # a machine that does not answer
        gate.wait(30)
        cleaned.extend(jobs)

    monkeypatch.setattr(sweep, "cleanup_many", slow)
    s = sweep.Sweeper(open_lead(str(lead_repo(tmp_path))))
    job = SimpleNamespace(id="j1", machine="local", runner_key="j1", branch="balanced/j1", writes=None, base=None)
    s.mark([job])  # type: ignore[list-item]
    began = time.monotonic()
    assert s.drain(0.2) is False and time.monotonic() - began < 5, "a stop is not held by the cleanup"
    gate.set()
    assert s.drain() is True and cleaned == [job], "without a bound it waits for all of it"
