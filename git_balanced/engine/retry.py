"""What to do after a failed attempt (DESIGN §8): try again in the way that fits what went wrong, or stop."""

from __future__ import annotations

from dataclasses import dataclass, replace

from git_balanced.vocab import Failure

NOT_RETRIED: dict[str, str] = {
    Failure.SIGNIN: "it is not signed in to its agent; sign in, then `git balanced retry {job}`",
    Failure.BUDGET: "it spent its budget",
    Failure.SETUP_FAILED: "the setup command failed; fix it, then `git balanced retry {job}`",
    Failure.SETTINGS: "the settings are invalid",
    Failure.STOPPED: "you stopped it",
    Failure.HELD: "it waits for you",
}
TRANSIENT_PAUSE = 60.0


@dataclass(frozen=True)
class Decision:
    """Whether the piece is tried again, the words the lead hears, and how the next attempt differs."""

    retry: bool
    words: str
    model: str | None = None  # a stronger model than the last
    budget_usd: float | None = None  # what is left of the piece's budget
    delay: float = 0.0  # seconds before it may start
    fresh_branch: bool = False  # from the lead's new tip, on a branch no other work holds
    other_machine: bool = False


def decide(failure: str, attempt: int, attempts: int, agent: str, model: str | None,
           stronger: str | None, job_id: str, lead_branch: str, left: float | None = None) -> Decision:
    """The next attempt's changes and the words the lead hears, or why there is none.

    `left` is what is left of the piece's budget (None without one): the next attempt gets that much."""
    if left is not None and left <= 0:
        failure = Failure.BUDGET
    if failure == Failure.GUARD and agent == "shell":  # the same command writes the same paths again
        return Decision(False, "Not tried again: the guard refused its commit, and the same command would "
                               "write the same paths; change the piece's `run` or `paths` in your plan file, "
                               "then store it again with `git balanced plan FILE --start`")
    d = _decide(failure, attempt, attempts, model, stronger, job_id, lead_branch)
    if d.retry and left is not None:
        return replace(d, words=f"{d.words}, with ${left:.2f} of its budget left", budget_usd=left)
    return d


def _decide(failure: str, attempt: int, attempts: int, model: str | None, stronger: str | None, job_id: str,
            lead_branch: str) -> Decision:
    if failure in NOT_RETRIED:
        return Decision(False, "Not tried again: " + NOT_RETRIED[failure].format(job=job_id))
    if failure == Failure.NOT_INSTALLED:  # not the piece's fault: as a lost machine's piece, it goes elsewhere
        return Decision(True, f"Tries again on a machine that has its agent: attempt {attempt + 1}",
                        other_machine=True)
    if attempt >= attempts:
        return Decision(False, f"Not tried again: that was attempt {attempt} of {attempts}")
    nxt = attempt + 1
    if failure == Failure.CHECK_FAILED:
        if stronger and stronger != model:
            return Decision(True, f"Tries again with a stronger model: attempt {nxt} on {stronger}",
                            model=stronger)
        return Decision(True, f"Tries again: attempt {nxt}" + (f" on {model}" if model else ""))
    if failure == Failure.CONFLICT:
        return Decision(True, f"Tries again from the new tip of {lead_branch}: attempt {nxt}",
                        fresh_branch=True)
    if failure == Failure.TRANSIENT:
        return Decision(True, f"Tries again in a minute: attempt {nxt}", delay=TRANSIENT_PAUSE)
    if failure == Failure.LOST:
        return Decision(True, f"Tries again on another machine: attempt {nxt}", other_machine=True)
    return Decision(True, f"Tries again: attempt {nxt}")
