"""The fold of a chain's events: sorted, fields merged, states only moving forward by rank."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import refs
from git_balanced.state.events import Event
from git_balanced.state.fold import JOB_RANK, PLAN_RANK, fold
from tests.support.builders import make_repo


def _event(lamport: int, state: str | None, node: str = "a", **data: object) -> Event:
    return Event("e", dict(data), state, lamport, node, time=1000.0 + lamport, sha=f"{lamport:040x}")


def test_states_only_move_forward(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    ref = refs.ref_for("jobs", "j1")
    for st in ("queued", "running", "landed", "failed", "running"):
        refs.append(repo, ref, st, f"j1 {st}", state=st)
    assert fold(refs.events_of(repo, ref), JOB_RANK)["state"] == "landed", "a landed job stays landed"


def test_events_fold_in_their_order_whatever_order_they_come_in() -> None:
    events = [_event(3, "running", machine="b"), _event(1, "queued", piece="p", machine="a"), _event(2, None)]
    got = fold(events, JOB_RANK)
    assert got["state"] == "running"
    assert got["fields"] == {"piece": "p", "machine": "b"}, "a later event's field wins"
    assert (got["created"], got["updated"], got["lamport"], got["events"]) == (1001.0, 1003.0, 3, 3)


def test_without_ranks_the_last_state_wins_and_an_empty_chain_is_nothing() -> None:
    assert fold([_event(1, "done"), _event(2, "started")])["state"] == "started"
    assert fold([_event(1, "done"), _event(2, "started")], PLAN_RANK)["state"] == "done"
    assert fold([]) == {"state": None, "fields": {}, "created": None, "updated": None, "lamport": 0, "events": 0}


def test_ties_on_the_clock_fold_the_same_on_every_clone() -> None:
    # Two clones wrote at the same lamport time: the node, then the commit, orders them the same everywhere.
    one, other = _event(5, "failed", node="x", why="x"), _event(5, "stopped", node="y", why="y")
    assert fold([one, other], JOB_RANK) == fold([other, one], JOB_RANK)
    assert fold([other, one], JOB_RANK)["fields"]["why"] == "y"
