"""A plan whose piece no ticked machine can ever take (its agent installed or signed in nowhere) is refused
at `plan`, saying why and what to do; `--wait` stores it anyway; the tools that store plans keep them."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced.machines.inventory.placement import Seat
from git_balanced.plans.store import never_placed
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan

NOT_THERE = {"claude": "Claude Code is not installed there"}


def test_a_piece_whose_agent_is_nowhere_is_refused_with_the_reason_and_what_to_do(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("one", "true"), {"id": "two", "task": "Do two.", "agent": "claude"}])
    assert r.code == 1, r
    assert "No machine can ever take this piece as things are, so the plan was not stored:" in r.err, r.err
    assert "  two (claude): local: Claude Code is not installed there" in r.err, r.err
    assert "`git balanced ready --yes`" in r.err and "--wait" in r.err, r.err
    assert json.loads(balanced(repo, "plans", "--json").out) == [], "nothing stored"


def test_wait_stores_it_waiting(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [{"id": "two", "task": "Do two.", "agent": "claude"}], "--wait")
    assert r.code == 0 and "waits: no ticked machine can take it now" in r.out, r


def test_shell_pieces_and_the_settings_agent_go_through(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("one", "true")]).code == 0


def test_never_only_when_every_machine_it_may_go_to_answered_and_lacks_it() -> None:
    lacking = Seat("local", lacks=NOT_THERE)
    assert never_placed([lacking], "claude", None) == "local: Claude Code is not installed there"
    assert never_placed([lacking, Seat("box")], "claude", None) is None, "box has it"
    assert never_placed([lacking, Seat("box", reachable=False)], "claude", None) is None, "box may have it"
    assert never_placed([lacking, Seat("box", ready=False)], "claude", None) is None, "box may have it once ready"
    assert never_placed([lacking, Seat("box", preference="manual-only")], "claude", None) is not None
    assert never_placed([Seat("local", ticked=False, lacks=NOT_THERE)], "claude", None) is None, \
        "nothing ticked: ticking one is what to do, as the plan says"
    assert never_placed([lacking, Seat("box")], "claude", "local") is not None, "named: that machine only"
    assert never_placed([lacking], "shell", None) is None
