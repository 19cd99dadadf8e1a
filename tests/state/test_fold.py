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


def _claim(name: str, node: str, lamport: int, sha: str, **data: object) -> Event:
    return Event(event=name, data={"node": node, **data}, state="running" if name == "started" else None,
                 lamport=lamport, node=node, sha=sha)


def test_two_claims_fold_to_the_first_in_any_order() -> None:
    placed = Event(event="placed", data={"piece": "p"}, state="queued", lamport=1, node="n1", sha="a")
    first = _claim("claimed", "n1", 2, "b")
    second = _claim("claimed", "n2", 2, "c")
    finished = Event(event="finished", data={"head": "n2-head"}, state="finished", lamport=4, node="n2", sha="d")
    events = [placed, first, second, _claim("started", "n2", 3, "e", pid=7), finished]
    for order in (events, list(reversed(events))):
        st = fold(order, JOB_RANK, owners=True)
        assert st["fields"]["node"] == "n1" and st["fields"]["lost_claims"] == ["n2"]
        assert st["state"] == "queued", "the loser's start and finish do not count"
        assert "pid" not in st["fields"] and "head" not in st["fields"]


def test_a_takeover_counts_only_from_the_owner_it_names() -> None:
    placed = Event(event="placed", data={}, state="queued", lamport=1, node="n1", sha="a")
    started = _claim("started", "n1", 2, "b")
    wrong = Event(event="taken-over", data={"node": "n3", "taken_from": "n2"}, state="lost", lamport=3,
                  node="n3", sha="c")
    assert fold([placed, started, wrong], JOB_RANK, owners=True)["fields"]["node"] == "n1"
    right = Event(event="taken-over", data={"node": "n2", "taken_from": "n1"}, state="lost", lamport=3,
                  node="n2", sha="d")
    late = Event(event="landed", data={"landed": "x"}, state="landed", lamport=4, node="n1", sha="e")
    st = fold([placed, started, right, late], JOB_RANK, owners=True)
    assert st["fields"]["node"] == "n2" and st["state"] == "lost", "the old owner's later landing does not count"


def test_jobs_without_claims_fold_as_before() -> None:
    events = [Event(event="placed", data={}, state="queued", lamport=1, node="n1", sha="a"),
              Event(event="started", data={"pid": 1}, state="running", lamport=2, node="n1", sha="b"),
              Event(event="landed", data={"landed": "x"}, state="landed", lamport=3, node="n2", sha="c")]
    assert fold(events, JOB_RANK, owners=True) == fold(events, JOB_RANK)
