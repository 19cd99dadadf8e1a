"""The chief, whole, with Pi as the headless chief: the run is told in tests/e2e/chief_run.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.chief_run import MARKS, run_the_chief, world  # noqa: F401  (the module fixture)
from tests.support.routed import Routed
from tests.support.sshd import Machine

pytestmark = MARKS


def test_the_chief_runs_two_leads_answers_one_question_and_never_lands(
        world: tuple[Routed, Routed, Machine, Path], tmp_path: Path, agent_bin: str,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    run_the_chief("pi", world, tmp_path, agent_bin, monkeypatch)
