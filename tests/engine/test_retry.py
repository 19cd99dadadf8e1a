"""What follows a failed attempt: the next attempt and how it differs, or why there is none."""

from __future__ import annotations

import pytest

from git_balanced.engine.retry import NOT_RETRIED, TRANSIENT_PAUSE, Attempt, Decision, decide, waits_for_a_move

PLAIN = Decision(retry=True, words="")  # what a plain next attempt changes: nothing


def _changes(d: Decision) -> dict[str, object]:
    """What the decision changes from a plain next attempt, by field."""
    return {k: v for k, v in vars(d).items() if k not in ("retry", "words") and v != getattr(PLAIN, k)}


def _decide(failure: str, attempt: int = 1, *, agent: str = "claude", model: str | None = "haiku",
            stronger: str | None = "sonnet", left: float | None = None, base_moved: bool = True) -> Decision:
    return decide(Attempt(failure=failure, attempt=attempt, attempts=3, agent=agent, model=model, stronger=stronger,
                          job="j1", lead_branch="main", left=left, base_moved=base_moved))


def test_each_failure_tries_again_in_its_own_way() -> None:
    cases = {
        "check_failed": ("Tries again with a stronger model: attempt 2 on sonnet", {"model": "sonnet"}),
        "conflict": ("Tries again from the new tip of main: attempt 2", {"fresh_branch": True}),
        "transient": ("Tries again in a minute: attempt 2", {"delay": TRANSIENT_PAUSE}),
        "lost": ("Tries again on another machine: attempt 2", {"other_machine": True}),
        "failed": ("Tries again: attempt 2", {}),
    }
    for failure, (words, changes) in cases.items():
        d = _decide(failure)
        assert (d.retry, d.words, _changes(d)) == (True, words, changes), failure


def test_a_failed_check_on_the_strongest_model_tries_it_again() -> None:
    d = _decide("check_failed", model="sonnet", stronger="sonnet")
    assert (d.words, _changes(d)) == ("Tries again: attempt 2 on sonnet", {})
    assert _decide("check_failed", agent="shell", model=None, stronger=None).words == \
        "Tries again on the new tip of main: attempt 2"


@pytest.mark.parametrize("failure", sorted(NOT_RETRIED))
def test_what_another_attempt_cannot_mend_is_not_tried_again(failure: str) -> None:
    d = _decide(failure)
    assert not d.retry and _changes(d) == {}
    assert d.words.startswith("Not tried again: ") and "{job}" not in d.words, d.words


def test_the_last_attempt_is_the_last() -> None:
    d = _decide("failed", attempt=3)
    assert (d.retry, d.words) == (False, "Not tried again: that was attempt 3 of 3")


def test_the_next_attempt_gets_what_is_left_of_the_budget_and_none_when_it_is_spent() -> None:
    d = _decide("failed", left=0.25)
    assert d.words == "Tries again: attempt 2, with $0.25 of its budget left" and _changes(d) == {"budget_usd": 0.25}
    spent = _decide("failed", left=0.0)
    assert not spent.retry and spent.words == "Not tried again: it spent its budget"


def test_a_shell_piece_the_guard_refused_would_write_the_same_paths_again() -> None:
    d = _decide("guard", agent="shell", model=None, stronger=None)
    assert not d.retry and "the same command would write the same paths" in d.words
    assert _decide("guard").retry, "an agent may write other paths on its next attempt"


def test_a_shell_piece_whose_check_failed_is_tried_again_only_once_the_base_moved() -> None:
    same = _decide("check_failed", agent="shell", model=None, stronger=None, base_moved=False)
    assert not same.retry and "the same command on the same base would fail the same check" in same.words
    assert "git balanced retry j1" in same.words, "it says how to try it once the branch moved"
    moved = _decide("check_failed", agent="shell", model=None, stronger=None, base_moved=True)
    assert moved.retry and moved.words == "Tries again on the new tip of main: attempt 2"
    assert _decide("check_failed", base_moved=False).retry, "an agent may do otherwise on its next attempt"
    last = _decide("check_failed", attempt=3, agent="shell", model=None, stronger=None, base_moved=False)
    assert last.words == "Not tried again: that was attempt 3 of 3"


def test_a_shell_piece_waits_for_the_branch_to_move_while_other_work_may_move_it() -> None:
    def attempt(**given: object) -> Attempt:
        fields: dict[str, object] = {"failure": "check_failed", "attempt": 1, "attempts": 3, "agent": "shell",
                                     "model": None, "stronger": None, "job": "j1", "lead_branch": "main",
                                     "base_moved": False, **given}
        return Attempt(**fields)  # type: ignore[arg-type]

    assert waits_for_a_move(attempt(), others_live=True)
    assert not waits_for_a_move(attempt(), others_live=False), "nothing else can move it: decided now"
    assert not waits_for_a_move(attempt(base_moved=True), others_live=True), "it moved: tried again now"
    assert not waits_for_a_move(attempt(agent="claude"), others_live=True), "an agent may do otherwise"
    assert not waits_for_a_move(attempt(attempt=3), others_live=True), "the last attempt is the last"
    assert not waits_for_a_move(attempt(left=0.0), others_live=True), "its budget is spent"
    assert not waits_for_a_move(attempt(failure="conflict"), others_live=True)
