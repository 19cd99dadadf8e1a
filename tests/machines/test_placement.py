"""Placement: which ticked machine takes a piece, and the words that say why."""

from __future__ import annotations

import pytest

from git_balanced.errors import BalancedError
from git_balanced.machines.placement import Seat, place


def test_placing_a_plan_spreads_its_pieces_and_says_why() -> None:
    seats = [Seat("local"), Seat("alpha"), Seat("beta", preference="prefer")]
    picks = [place(seats) for _ in range(6)]
    assert [p.machine for p in picks] == ["beta", "local", "alpha", "beta", "beta", "local"], \
        "(load + 1) / weight: beta weighs twice as much as the others, so it takes half"
    assert picks[0].why == "beta: you prefer it (0 agents running there)"
    assert picks[1].why == "local: fewest agents running there (0), first of equals", "ties: lower load, local"
    assert picks[2].why == "alpha: fewest agents running there (0)"
    assert [s.recent for s in seats] == [2, 1, 3], "every pick counts as a recent placement"


def test_explicit_machines_never_fall_back_and_unreachable_ones_are_skipped() -> None:
    seats = [Seat("local"), Seat("alpha", reachable=False, why_not="it did not answer within 5 s"),
             Seat("beta", ticked=False), Seat("gamma", preference="manual-only")]
    p = place(seats, explicit="alpha")
    assert p.machine == "alpha" and p.why == "alpha: named by the plan, but it did not answer within 5 s; it " \
                                             "waits for that machine"
    assert place(seats, explicit="beta").why == "beta: named by the plan, but it is not ticked; it waits for " \
                                                "that machine"
    assert place(seats, explicit="gamma").machine == "gamma", "manual-only takes explicit pieces"
    p = place(seats)
    assert p.machine == "local" and "alpha is skipped: it did not answer within 5 s" in p.why, p.why
    lonely = [Seat("local", ticked=False), Seat("alpha", ready=False)]
    assert place(lonely).machine == "local", "local is the fallback"


def test_among_equals_the_one_set_up_already_wins_then_local() -> None:
    pick = place([Seat("box"), Seat("zed", setup_done=True)])
    assert pick.machine == "zed" and pick.why == "zed: as busy as the others, and set up already"
    assert place([Seat("box"), Seat("local")]).machine == "local", "then local, then the name"
    assert place([Seat("zed"), Seat("box")]).machine == "box"


def test_manual_only_machines_take_only_the_pieces_named_to_them() -> None:
    seats = [Seat("local", running=9), Seat("alpha", preference="manual-only")]
    assert place(seats).machine == "local", "however busy the others are"
    assert place(seats, explicit="alpha").why == "alpha: named by the plan"


def test_nothing_ready_and_no_local_is_an_error_that_says_what_to_do() -> None:
    with pytest.raises(BalancedError) as refused:
        place([Seat("alpha", ready=False), Seat("beta", ticked=False)])
    assert refused.value.message == "No ticked machine is ready to take work."
    assert "git balanced tick local" in str(refused.value.hint)
    with pytest.raises(BalancedError, match="There is no machine named 'nowhere'"):
        place([Seat("local")], explicit="nowhere")
