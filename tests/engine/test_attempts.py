"""The next attempt at a piece: what it carries from the one before, and what its reason changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.engine.attempts import Next, next_attempt
from git_balanced.lead import open_lead
from tests.support.plans import lead_repo


def test_the_next_attempt_carries_the_piece_and_changes_what_its_reason_says(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(lead_repo(tmp_path, check=None))
    lead = open_lead()
    first = J.place(lead.repo, {"plan": "p1", "piece": "api", "task": "Do api.", "agent": "shell", "run": "true",
                                "machine": "local", "branch": "balanced/api", "lead": "main", "attempt": 1,
                                "budget_usd": 1.0})
    job = J.one(lead.repo, first)
    assert job is not None
    new = next_attempt(lead, job, Next(retry_reason="its check failed", model="strong", budget_usd=0.5))
    again = J.one(lead.repo, new)
    assert again is not None
    assert (again.piece, again.task, again.branch, again.run) == ("api", "Do api.", "balanced/api", "true")
    assert (again.attempt, again.previous, again.retry_reason) == (2, first, "its check failed")
    assert (again.model, again.budget_usd, again.machine) == ("strong", 0.5, "local")

    moved = next_attempt(lead, again, Next(retry_reason="moved", same_attempt=True, agent="codex", model=None))
    last = J.one(lead.repo, moved)
    assert last is not None and (last.attempt, last.agent, last.model, last.budget_usd) == (2, "codex", None, 0.5)
