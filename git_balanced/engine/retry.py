"""What to do after a failed attempt (DESIGN §8): try again in the way that fits what went wrong, or stop.

Only what could change is tried again: a shell piece runs the same command, so its failed check is tried
again only once the lead's branch moved from the base it started on (the merge, and so the check, differ)."""

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
SAME_AGAIN = "the same command on the same base would fail the same check"


@dataclass(frozen=True, kw_only=True)
class Decision:
    """Whether the piece is tried again, the words the lead hears, and how the next attempt differs."""

    retry: bool
    words: str
    model: str | None = None  # a stronger model than the last
    budget_usd: float | None = None  # what is left of the piece's budget
    delay: float = 0.0  # seconds before it may start
    fresh_branch: bool = False  # from the lead's new tip, on a branch no other work holds
    other_machine: bool = False


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """What `decide` needs of the attempt that failed, and of where the lead's branch is now."""

    failure: str
    attempt: int
    attempts: int  # how many a piece gets in all (`[balanced] attempts`)
    agent: str
    model: str | None
    stronger: str | None  # the next model on the ladder, if there is one
    job: str
    lead_branch: str
    left: float | None = None  # what is left of the piece's budget (None without one)
    base_moved: bool = True  # the lead's branch moved since the attempt's base


def decide(a: Attempt) -> Decision:
    """The next attempt's changes and the words the lead hears, or why there is none. A next attempt gets what
    is left of the piece's budget."""
    failure = Failure.BUDGET if a.left is not None and a.left <= 0 else a.failure
    if failure == Failure.GUARD and a.agent == "shell":  # the same command writes the same paths again
        return Decision(retry=False, words="Not tried again: the guard refused its commit, and the same command "
                                           "would write the same paths; change the piece's `run` or `paths` in "
                                           "your plan file, then store it again with `git balanced plan FILE "
                                           "--start`")
    if same_again(replace(a, failure=failure)):
        return Decision(retry=False, words=f"Not tried again: {SAME_AGAIN}, as {a.lead_branch} has not moved; "
                                           f"fix the piece's `run` "
                                           f"in your plan file and store it again, or `git balanced retry "
                                           f"{a.job}` once {a.lead_branch} moved")
    d = _decide(replace(a, failure=failure))
    if d.retry and a.left is not None:
        return replace(d, words=f"{d.words}, with ${a.left:.2f} of its budget left", budget_usd=a.left)
    return d


def same_again(a: Attempt) -> bool:
    """Whether a shell piece's check failed on the base it would run on again (the same command, the same base,
    attempts left): tried again now it fails again."""
    return (a.failure == Failure.CHECK_FAILED and a.agent == "shell" and not a.base_moved
            and a.attempt < a.attempts)


def waits_for_a_move(a: Attempt, others_live: bool) -> bool:
    """Whether a shell piece whose check failed waits for the lead's branch to move before it is decided: it runs
    the same command again, so on the base it failed on it fails again, while other live work of the lead's plans
    (`others_live`) may land first and move the branch (then it is tried again)."""
    spent = a.left is not None and a.left <= 0
    return same_again(a) and not spent and others_live


def _decide(a: Attempt) -> Decision:
    failure, nxt = a.failure, a.attempt + 1
    if failure in NOT_RETRIED:
        return Decision(retry=False, words="Not tried again: " + NOT_RETRIED[failure].format(job=a.job))
    if failure == Failure.NOT_INSTALLED:  # not the piece's fault: as a lost machine's piece, it goes elsewhere
        return Decision(retry=True, words=f"Tries again on a machine that has its agent: attempt {nxt}",
                        other_machine=True)
    if a.attempt >= a.attempts:
        return Decision(retry=False, words=f"Not tried again: that was attempt {a.attempt} of {a.attempts}")
    if failure == Failure.CHECK_FAILED:
        if a.stronger and a.stronger != a.model:
            return Decision(retry=True, words=f"Tries again with a stronger model: attempt {nxt} on {a.stronger}",
                            model=a.stronger)
        if a.agent == "shell":
            return Decision(retry=True, words=f"Tries again on the new tip of {a.lead_branch}: attempt {nxt}")
        return Decision(retry=True, words=f"Tries again: attempt {nxt}" + (f" on {a.model}" if a.model else ""))
    if failure == Failure.CONFLICT:
        return Decision(retry=True, words=f"Tries again from the new tip of {a.lead_branch}: attempt {nxt}",
                        fresh_branch=True)
    if failure == Failure.TRANSIENT:
        return Decision(retry=True, words=f"Tries again in a minute: attempt {nxt}", delay=TRANSIENT_PAUSE)
    if failure == Failure.LOST:
        return Decision(retry=True, words=f"Tries again on another machine: attempt {nxt}", other_machine=True)
    return Decision(retry=True, words=f"Tries again: attempt {nxt}")
