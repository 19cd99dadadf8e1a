"""An engine killed (as SIGKILL would) between landing and telling: every line the lead should hear is in the
inbox exactly once after the next engine's pass, and the board says landed, with the merge that landed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.builders import git
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan


@pytest.mark.parametrize("point", ["after-move", "after-told"])
def test_every_landing_is_told_once_after_a_kill(tmp_path: Path, point: str) -> None:
    repo = lead_repo(tmp_path)
    pieces = [piece("a", "echo a > src/a.txt"), piece("b", "echo b > src/b.txt")]
    assert plan(repo, pieces, "--start").code == 0

    r = engine(repo, "--until-idle", crash_at=point)
    assert r.code == 137, r  # it died where it was told to: the branch moved, the lead not (all) told
    moved = git(repo, "log", "--first-parent", "--format=%s", "main")
    assert "Land balanced/" in moved, moved
    for name in [n for n in ("a", "b") if f"Land balanced/{n} " in moved]:  # no engine runs now: the board says it
        [job] = jobs_of(repo, name)
        assert job["state"] == "landed" and job["reason"].startswith("landed in main as "), job
    r = engine(repo, "--until-idle")
    assert r.code == 0, r

    text = inbox_text(repo)
    merges = dict(line.split(" ", 1)[::-1] for line in git(repo, "log", "--first-parent", "--format=%h %s",
                                                                    "main").splitlines())
    for name in ("a", "b"):
        [job] = jobs_of(repo, name)
        assert job["state"] == "landed", job
        merge = merges[f"Land balanced/{name} ({name}, attempt 1)"]
        line = f"Its check passed, so balanced/{name} landed in main as {merge[:7]}"
        assert text.count(line) == 1, text
        assert text.count(f"balanced/{name} landed in main") == 1, text
        assert f"balanced/{name} is in main already" not in text, text
    assert text.count("is done: 2 landed") == 1, text
