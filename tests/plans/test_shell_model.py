"""A shell piece runs a command, not a model: the board, the inbox and its events name none, even when the
settings keep a `model` written for another agent."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import balanced
from tests.support.plans import board, engine, lead_repo, piece, plan


def test_a_shell_piece_has_no_model(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra='model = "sonnet"\n')
    assert plan(repo, [piece("one", "echo one > src/one.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    jobs = board(repo)["jobs"]
    assert jobs and all(j["model"] is None for j in jobs), jobs  # type: ignore[index,union-attr]
    for args in (["board"], ["inbox"], ["log"]):
        r = balanced(repo, *args)
        assert "sonnet" not in r.out, (args, r.out)
