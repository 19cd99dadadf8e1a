"""Speculative checks on the free check slots: what lands, and where the branch moves, stay the serial
queue's; only the rounds waited for change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from git_balanced.landing import speculate
from git_balanced.landing.bisect import Search, search
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.landing import branch, branches, check_runs, landed_subjects, project

SLOTS = "[balanced]\ncheck_slots = 4\n"


def _passing(repo: Path) -> set[str]:
    """The trees with a passing check note."""
    found = set()
    for line in git(repo, "notes", "--ref=balanced-checks", "list").splitlines():
        tree = line.split()[1]
        note = git(repo, "notes", "--ref=balanced-checks", "show", tree)
        if any(json.loads(x).get("result") == "pass" for x in note.splitlines() if x.startswith("{")):
            found.add(tree)
    return found


def _moves(repo: Path) -> list[str]:
    """Every commit the lead's branch pointed at, newest first (its reflog), but the first."""
    return git(repo, "rev-list", "--walk-reflogs", "main").splitlines()[:-1]


def _land(repo: Path, names: list[str]) -> dict[str, object]:
    r = balanced(repo, "land", *names, "--json")
    assert r.out.strip(), f"land exited {r.code}:\n{r.err}"
    return json.loads(r.out)


def _outcome(repo: Path, data: dict[str, object]) -> tuple[list[tuple[str, str]], list[str], str]:
    verdicts = [(v["branch"], v["status"]) for v in data["verdicts"]]  # type: ignore[attr-defined]
    return verdicts, landed_subjects(repo), git(repo, "rev-parse", "main:src")


def test_culprits_to_speculate_on_are_the_failing_range_earliest_first() -> None:
    s = Search(16, {4: True, 8: False, 12: False, 16: False})
    assert speculate.culprits(s, 1) == [5], "one free slot: the first branch of the failing range"
    assert speculate.culprits(s, 3) == [5, 6, 7]
    assert speculate.culprits(Search(3, {}), 1) == [1], "none failed yet: any may, the earliest first"
    assert speculate.culprits(Search(2, {1: True, 2: False}), 4) == [], "the last has nothing after it"
    assert speculate.culprits(s, 0) == []


def test_the_search_finds_what_it_finds_without_speculating() -> None:
    for bad in [set(), *({b} for b in range(1, 17)), {2, 7}, {15, 16}]:
        def probe(idx: list[int], ahead: list[int] | None = None, bad: set[int] = bad) -> dict[int, bool]:
            return {i: not any(b <= i for b in bad) for i in idx}

        for slots in (1, 2, 4):
            plain, spec = search(16, probe, slots), speculate.search(16, probe, slots)
            assert (spec.lo, spec.hi, spec.rounds) == (plain.lo, plain.hi, plain.rounds), (bad, slots)


def test_spare_slots_land_sooner_and_as_the_serial_queue_does(tmp_path: Path, sealed: Path) -> None:
    serial = project(tmp_path / "one")
    fast = project(tmp_path / "four", extra=SLOTS)
    names = branches(serial, 8, bad={3})
    branches(fast, 8, bad={3})
    one, four = _land(serial, names), _land(fast, names)
    assert _outcome(fast, four) == _outcome(serial, one), "the same verdicts, landings and tree"
    assert ("f3", "check_failed") in _outcome(fast, four)[0] and "Land f3" not in landed_subjects(fast)
    # Round 1: prefixes 2, 4, 6, 8 (4 fails); round 2: prefix 3, and beside it the chain after f3 and after f4,
    # each on what would land before it. f3 failed, so f1 and f2 land and the chain f4..f8 was checked already.
    assert (four["rounds"], one["rounds"]) == (2, 5), (four, one)
    assert four["check_runs"] == 7, four
    assert json.loads((fast / ".git" / "balanced" / "landing.json").read_text())["limit"] == 17, \
        "a batch failed: halved to 16, then one more for the batch that passed"
    passing = _passing(fast)
    for sha in _moves(fast):
        assert git(fast, "rev-parse", f"{sha}^{{tree}}") in passing, "the branch moved only to a checked tree"


def test_mixed_failures_land_as_the_serial_queue_does(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path, extra=SLOTS)
    for prefix, n, bad in (("f", 6, {2, 5}), ("g", 5, {1, 2})):
        names = []
        for i in range(1, n + 1):
            names.append(f"{prefix}{i}")
            branch(repo, names[-1], {f"src/{names[-1]}.txt": "BAD\n" if i in bad else f"good {i}\n"})
        before = landed_subjects(repo)
        data = _land(repo, names)
        # One at a time, in order: each good branch lands on the ones before it, each bad one is refused.
        assert [(v["branch"], v["status"]) for v in data["verdicts"]] == [  # type: ignore[attr-defined]
            (x, "check_failed" if i in bad else "landed") for i, x in enumerate(names, 1)], data
        assert landed_subjects(repo)[:-len(before)] == [f"Land {x}" for i, x in reversed(list(enumerate(names, 1)))
                                                         if i not in bad], "a failing branch never lands"
    passing = _passing(repo)
    assert all(git(repo, "rev-parse", f"{sha}^{{tree}}") in passing for sha in _moves(repo)), \
        "the branch moved only to checked trees"


def test_a_landing_killed_after_a_speculative_round_goes_on(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path, extra=SLOTS)
    names = branches(repo, 8, bad={3})
    env = dict(os.environ, GIT_BALANCED_CRASH_AT="after-check")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    killed = subprocess.run(["git", "balanced", "land", *names], cwd=repo, env=env, capture_output=True, text=True)
    assert killed.returncode == 137, killed.stderr
    assert git(repo, "rev-list", "--count", "main") == "1", "killed before the move: nothing moved"
    spent = check_runs(sealed)
    data = _land(repo, names)
    assert [b for b, s in _outcome(repo, data)[0] if s == "check_failed"] == ["f3"]
    assert sorted(s for s in landed_subjects(repo) if s.startswith("Land")) == sorted(
        f"Land f{i}" for i in (1, 2, 4, 5, 6, 7, 8))
    passing = _passing(repo)
    assert all(git(repo, "rev-parse", f"{sha}^{{tree}}") in passing for sha in _moves(repo))
    assert check_runs(sealed) >= spent and data["check_runs"] <= 7
