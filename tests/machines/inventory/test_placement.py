"""Placement: which ticked machine takes a piece, and the words that say why."""

from __future__ import annotations

import pytest

from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.placement import Placement, Seat, choose, counted


def one_after_another(seats: list[Seat], n: int) -> tuple[list[Placement], list[Seat]]:
    """`n` pieces placed in turn, each counted on its machine before the next; the seats after them."""
    picks = []
    for _ in range(n):
        picks.append(choose(seats))
        seats = counted(seats, picks[-1].machine)
    return picks, seats


def test_placing_a_plan_spreads_its_pieces_and_says_why() -> None:
    seats = [Seat("local"), Seat("alpha"), Seat("beta", preference="prefer")]
    picks, after = one_after_another(seats, 6)
    assert [p.machine for p in picks] == ["beta", "local", "alpha", "beta", "beta", "local"], \
        "(load + 1) / weight: beta weighs twice as much as the others, so it takes half"
    assert picks[0].why == "beta: you prefer it (0 agents running there)"
    assert picks[1].why == "local: fewest agents running there (0), first of equals", "ties: lower load, local"
    assert picks[2].why == "alpha: fewest agents running there (0)"
    assert [s.recent for s in after] == [2, 1, 3], "every pick counts as a recent placement"
    assert [s.recent for s in seats] == [0, 0, 0], "the seats given are left as they are"


def test_explicit_machines_never_fall_back_and_unreachable_ones_are_skipped() -> None:
    seats = [Seat("local"), Seat("alpha", reachable=False, why_not="it did not answer within 5 s"),
             Seat("beta", ticked=False), Seat("gamma", preference="manual-only")]
    p = choose(seats, explicit="alpha")
    assert p.machine == "alpha" and p.why == "alpha: named by the plan, but it did not answer within 5 s; it " \
                                             "waits for that machine"
    assert choose(seats, explicit="beta").why == "beta: named by the plan, but it is not ticked; it waits for " \
                                                "that machine"
    assert choose(seats, explicit="gamma").machine == "gamma", "manual-only takes explicit pieces"
    p = choose(seats)
    assert p.why == "local: the only ticked machine that can take it (0 agents running there); skipped alpha: " \
                    "it did not answer within 5 s", "not `the only ticked machine` while alpha is ticked too"
    lonely = [Seat("local", ticked=False), Seat("alpha", ready=False, why_not="`git balanced ready` has not run")]
    p = choose(lonely)
    assert p.waits and p.machine == "", "unticked local is no fallback"
    assert p.why == "no ticked machine can take it now: alpha: `git balanced ready` has not run", p.why


def test_among_equals_the_one_set_up_already_wins_then_local() -> None:
    pick = choose([Seat("box"), Seat("zed", setup_done=True)])
    assert pick.machine == "zed" and pick.why == "zed: as busy as the others, and set up already"
    assert choose([Seat("box"), Seat("local")]).machine == "local", "then local, then the name"
    assert choose([Seat("zed"), Seat("box")]).machine == "box"


def test_manual_only_machines_take_only_the_pieces_named_to_them() -> None:
    seats = [Seat("local", running=9), Seat("alpha", preference="manual-only")]
    assert choose(seats).machine == "local", "however busy the others are"
    assert choose(seats, explicit="alpha").why == "alpha: named by the plan"


def test_nothing_ready_waits_with_what_to_do_and_an_unknown_name_is_an_error() -> None:
    p = choose([Seat("alpha", ticked=False), Seat("local", ticked=False)])
    assert p.waits and "tick one with `git balanced tick NAME`" in p.why, p.why
    with pytest.raises(BalancedError, match="There is no machine named 'nowhere'"):
        choose([Seat("local")], explicit="nowhere")


def test_a_piece_goes_only_where_its_agent_is_installed_and_signed_in() -> None:
    seats = [Seat("local", running=3), Seat("build-box", lacks={"claude": "Claude Code is not installed there"}),
             Seat("gpu-box", lacks={"codex": "not signed in to Codex"})]
    p = choose(seats, agent="claude")
    assert p.machine == "gpu-box", "build-box lacks Claude Code, so the busier local and gpu-box remain"
    assert p.why.endswith("; skipped build-box: Claude Code is not installed there"), p.why
    p = choose([Seat("local", ticked=False), *seats[1:]], agent="codex")
    assert p.machine == "build-box" and p.why.endswith("skipped gpu-box: not signed in to Codex"), p.why
    none = [Seat("local", lacks={"pi": "Pi is not installed there"}),
            Seat("gpu-box", lacks={"pi": "not signed in to Pi"})]
    p = choose(none, agent="pi")
    assert p.waits and p.why == ("no ticked machine can take it now: local: Pi is not installed there; gpu-box: "
                                 "not signed in to Pi"), p.why
    named = choose(none, agent="pi", explicit="gpu-box")
    assert named.machine == "gpu-box" and "but not signed in to Pi; it waits for that machine" in named.why
    assert choose(seats, agent="shell").machine == "build-box", "the shell agent is everywhere"


def test_local_has_a_preference_like_any_other_machine() -> None:
    seats = [Seat("local", preference="manual-only"), Seat("alpha"), Seat("beta")]
    picks = [p.machine for p in one_after_another(seats, 4)[0]]
    assert "local" not in picks, "manual only: this machine only coordinates"
    assert choose(seats, explicit="local").why == "local: named by the plan"
    less = [Seat("local", preference="less-often"), Seat("alpha")]
    p = choose(less)
    assert p.machine == "alpha" and p.why == "alpha: the others are set to less often (0 agents running there)", \
        "not `you prefer it` when nothing is preferred"
