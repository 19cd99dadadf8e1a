"""The size limit: a worker's branch with a file past `[landing] max_file_mb`, or a change past
`max_change_mb`, is held for you with the file and its size named; `land NAME --yes` lands it once its check
passes; a branch under the limit lands as ever."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.settings import Settings
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.landing import branch
from tests.support.plans import board, engine, inbox_text, lead_repo, piece, plan

LIMITS = "[landing]\nmax_file_mb = 0.01\nmax_change_mb = 0.02\n"  # 10,485.76 and 20,971.52 bytes


def test_a_worker_that_commits_a_file_just_over_the_limit_is_held_and_one_under_it_lands(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra=LIMITS)
    plan(repo, [piece("big", "head -c 10486 /dev/zero > src/big.bin"),
                piece("small", "head -c 10485 /dev/zero > src/small.bin")], "--start")
    engine(repo, "--until-idle")
    rows = {j["piece"]: j for j in board(repo)["jobs"]}  # type: ignore[index]
    assert rows["small"]["state"] == "landed", rows
    assert rows["big"]["state"] == "held", rows
    assert git(repo, "ls-tree", "--name-only", "main", "src/") == "src/base.txt\nsrc/small.bin"
    why = "src/big.bin (10 kB: 10,486 bytes, over `[landing] max_file_mb` = 0.01)"
    assert why in str(rows["big"]["reason"]), rows["big"]
    shown = balanced(repo, "board").out
    assert f"! big: it changes {why}, so it waits for you" in shown, shown
    assert "git balanced land balanced/big --yes" in shown
    assert f"balanced/big is held for you: it changes {why}" in inbox_text(repo)
    engine(repo, "--until-idle")
    assert {j["piece"]: j for j in board(repo)["jobs"]}["big"]["state"] == "held", \
        "the engine alone never lands it"  # type: ignore[index]
    r = balanced(repo, "land", str(rows["big"]["id"]), "--yes")
    assert r.code == 0 and "landed    balanced/big" in r.out, r
    assert git(repo, "cat-file", "-s", "main:src/big.bin") == "10486", "you said so, and its check passed"


def test_a_change_past_max_change_mb_names_its_largest_files(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra=LIMITS)
    files = {f"src/part{i}.txt": "x" * 9000 + "\n" for i in range(3)}  # each under the file limit, 27 kB together
    branch(repo, "parts", files)
    v = json.loads(balanced(repo, "land", "parts", "--json").out)["verdicts"][0]
    assert v["status"] == "held" and sorted(v["paths"]) == sorted(files), v
    assert "src/part0.txt (9 kB of a 26 kB change, over `[landing] max_change_mb` = 0.02)" in v["reason"], v
    v = json.loads(balanced(repo, "land", "parts", "--yes", "--json").out)["verdicts"][0]
    assert v["status"] == "landed", v


def test_a_held_file_whose_check_fails_still_does_not_land(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra=LIMITS)
    branch(repo, "bad-big", {"src/big.txt": "BAD\n" + "x" * 11000})
    assert json.loads(balanced(repo, "land", "bad-big", "--json").out)["verdicts"][0]["status"] == "held"
    v = json.loads(balanced(repo, "land", "bad-big", "--yes", "--json").out)["verdicts"][0]
    assert v["status"] == "check_failed", v


def test_the_defaults_take_a_normal_change_and_a_bad_limit_is_one_clear_error(tmp_path: Path) -> None:
    assert Settings().landing.max_file_mb == 10 and Settings().landing.max_change_mb == 50
    repo = lead_repo(tmp_path / "one")
    branch(repo, "normal", {"src/code.py": "x = 1\n" * 20000})
    assert json.loads(balanced(repo, "land", "normal", "--json").out)["verdicts"][0]["status"] == "landed"
    bad = make_repo(tmp_path / "two", {"src/base.txt": "ok\n",
                                        ".magnum/settings.toml": '[landing]\nmax_file_mb = "10"\n'})
    branch(bad, "f1", {"src/f1.txt": "one\n"})
    r = balanced(bad, "land", "f1")
    assert r.code == 1 and "Traceback" not in r.err, r
    assert '`landing.max_file_mb` is "10" (a string), but it must be a number of megabytes above 0' in r.err, r.err
