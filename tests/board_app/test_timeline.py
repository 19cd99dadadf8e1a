"""The board app's timeline: a lane per machine and a bar per worker, from jobs a real engine ran."""

from __future__ import annotations

from pathlib import Path

from git_balanced import jobs as J
from git_balanced.board_app.timeline import lines
from git_balanced.git import Repo
from tests.support.plans import engine, lead_repo, piece, plan


def test_each_worker_is_a_bar_in_its_machines_lane_from_placed_to_its_end(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("api", "echo a > src/a.txt"), piece("web", "echo w > src/w.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    jobs = list(J.all_jobs(Repo.discover(str(repo))).values())
    shown = [t.plain for t in lines(jobs, {j.id: f"e{i + 1}" for i, j in enumerate(jobs)}, 80)]
    assert "→" in shown[0] and shown[1] == "local", shown
    rows = shown[2:]
    assert sorted(r.split()[1] for r in rows) == ["api", "web"], rows
    assert all(len(r) <= 80 and "█" in r and r.endswith("● landed") for r in rows), rows
    assert [t.plain for t in lines([], {}, 80)] == ["No worker has started yet."]
