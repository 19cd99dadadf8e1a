"""The search for the longest passing prefix: counts of checks and rounds."""

from __future__ import annotations

import itertools

from git_balanced.landing.bisect import search


def _run(n: int, bad: set[int], slots: int = 1) -> tuple[int, int, int, int]:
    calls: list[int] = []

    def probe(idx: list[int]) -> dict[int, bool]:
        calls.extend(idx)
        return {i: not any(b <= i for b in bad) for i in idx}

    s = search(n, probe, slots)
    return s.lo, s.hi, len(calls), s.rounds


def test_no_culprit_costs_one_check() -> None:
    lo, hi, checks, rounds = _run(16, set())
    assert (lo, checks, rounds) == (16, 1, 1)


def test_one_culprit_found_anywhere_in_five_checks() -> None:
    for bad in range(1, 17):
        lo, hi, checks, _ = _run(16, {bad})
        assert (lo, hi) == (bad - 1, bad), f"culprit {bad} found"
        assert checks <= 5, f"culprit at {bad} took {checks} checks"


def test_first_of_two_culprits_is_found() -> None:
    for a, b in itertools.combinations(range(1, 17), 2):
        lo, hi, checks, _ = _run(16, {a, b})
        assert (lo, hi) == (a - 1, a)
        assert checks <= 5


def test_more_slots_take_fewer_rounds() -> None:
    worst1 = max(_run(16, {b}, 1)[3] for b in range(1, 17))
    worst4 = max(_run(16, {b}, 4)[3] for b in range(1, 17))
    assert worst4 < worst1, f"4 slots: {worst4} rounds, 1 slot: {worst1}"
    assert worst4 <= 3


def test_known_results_cost_nothing() -> None:
    calls: list[int] = []

    def probe(idx: list[int]) -> dict[int, bool]:
        calls.extend(idx)
        return {i: i < 3 for i in idx}

    s = search(4, probe, known={4: False, 2: True})
    assert (s.lo, s.hi) == (2, 3) and calls == [3]
