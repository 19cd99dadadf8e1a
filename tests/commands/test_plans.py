"""`git balanced plans`: one line per plan, its columns lined up whatever the counts and states."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan


def test_plans_line_up_their_columns(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("one", "true")], task="Short").code == 0
    assert plan(repo, [piece(f"p{i}", "true") for i in range(10)], task="Ten pieces").code == 0
    ran = balanced(repo, "plans")
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert len(lines) == 2
    assert "10 pieces  Ten pieces" in lines[0] and "1 piece    Short" in lines[1], ran.out
    starts = {line.index("Ten pieces") if "Ten" in line else line.index("Short") for line in lines}
    assert len(starts) == 1, f"the tasks start in one column:\n{ran.out}"
