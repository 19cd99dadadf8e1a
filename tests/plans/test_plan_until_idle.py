"""`plan FILE --start --until-idle`: the plan stored, started and run to the end by one process, as `plan --start`
then `engine --until-idle` would; without --start it is refused and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import board, lead_repo, piece, plan


def test_one_process_stores_starts_and_lands_the_plan(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("one", "echo one > src/one.txt"), piece("two", "echo two > src/two.txt", after=["one"])],
             "--start", "--until-idle")
    assert r.code == 0, r
    assert "Started: the engine runs it here until nothing can move." in r.out
    assert "landed in main" in r.out + r.err, r  # the engine's narration, as `engine --until-idle` tells it
    states = {j["piece"]: j["state"] for j in board(repo)["jobs"]}  # type: ignore[union-attr,index]
    assert states == {"one": "landed", "two": "landed"}, states
    assert git(repo, "show", "main:src/two.txt").strip() == "two"
    again = balanced(repo, "engine", "--stop")
    assert again.code == 0 and "No engine runs" in again.out, "the lock was let go at the end"


def test_with_json_stdout_is_the_plan_alone(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("one", "echo one > src/one.txt")], "--start", "--until-idle", "--json")
    assert r.code == 0, r
    assert json.loads(r.out)["started"] is True, "the engine's events do not mix into the JSON"
    assert "landed in main" in r.err


def test_until_idle_without_start_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("one", "echo one > src/one.txt")], "--until-idle")
    assert r.code == 2, r
    assert "--until-idle runs the plan, so it goes with --start" in r.err
    assert "git balanced plan FILE --start --until-idle" in r.err
    assert balanced(repo, "plans", "--json").out.strip() == "[]"


def test_until_idle_beside_a_running_engine_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    from git_balanced.engine.background import EngineLock
    from git_balanced.lead import open_lead

    repo = lead_repo(tmp_path)
    lock = EngineLock(open_lead(str(repo)))
    assert lock.acquire(), "no engine ran yet"
    try:
        r = plan(repo, [piece("one", "echo one > src/one.txt")], "--start", "--until-idle")
    finally:
        lock.release()
    assert r.code == 1 and "An engine already runs for this repository" in r.err, r
    assert "git balanced plan FILE --start" in r.err and "Started" not in r.out, r
    assert balanced(repo, "plans", "--json").out.strip() == "[]", "nothing stored"
