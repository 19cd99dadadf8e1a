"""The job's words, written once: its states, how an attempt failed, what the runner's state of a run is, and
the actions the engine asks of a runner. Each is a `StrEnum`, so a member equals the string stored in refs
written by any version, and the sets callers ask about ("is it live?", "can it be stopped?") are named here
rather than rebuilt as tuples in each caller."""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    """Where one attempt at a piece is; the fold lets a state move only forward (`state/fold.JOB_RANK`)."""

    QUEUED = "queued"  # placed, its worker not started yet (or waiting for a machine, a reset, a piece before it)
    RUNNING = "running"  # its worker runs
    PAUSED = "paused"  # its plan's usage limit stopped it; it carries on after the reset
    FINISHED = "finished"  # its worker committed; it waits for its landing
    HELD = "held"  # the landing queue held it for you (a protected path, say): you land or retry it
    FAILED = "failed"
    STOPPED = "stopped"  # by you, or at its budget
    LOST = "lost"  # its machine, or its engine, went out of reach
    RETRIED = "retried"  # a newer attempt carries on its piece
    LANDED = "landed"
    REPORTED = "reported"  # a piece that writes nothing (`writes: none`) finished: its report is its result


# Not decided yet: the engine still has work to do on it (start it, watch it, resume it, land it).
LIVE = frozenset((JobState.QUEUED, JobState.RUNNING, JobState.PAUSED, JobState.FINISHED))
# A worker is at work on it, or is about to be: it can still hear an answer to its question, and it holds a seat.
AT_WORK = frozenset((JobState.QUEUED, JobState.RUNNING, JobState.PAUSED))
# `git balanced stop` ends it: what is live (a finished job given up is not landed).
STOPPABLE = LIVE
# It waits on the person: the landing held it; `git balanced land` or `retry` moves it on.
NEEDS_YOU = frozenset((JobState.HELD,))
# The landing takes it: it finished, or it was held and you land it by name.
LANDABLE = frozenset((JobState.FINISHED, JobState.HELD))
# Ended without landing: the engine may try its piece again.
ENDED_BADLY = frozenset((JobState.FAILED, JobState.STOPPED, JobState.LOST))
# Nothing more happens to this attempt. A held job is not done: it waits for you and can still land.
DONE = ENDED_BADLY | {JobState.RETRIED, JobState.LANDED, JobState.REPORTED}
# Its piece is done and went well: it landed, or (a piece that writes nothing) its report came.
ENDED_WELL = frozenset((JobState.LANDED, JobState.REPORTED))


class Failure(StrEnum):
    """Why an attempt did not finish or land (the job's `failure` field, and its event's name)."""

    CRASHED = "crashed"  # its runner or agent died, or it could not start
    FAILED = "failed"  # its agent said it failed, or its commit was refused
    LOST = "lost"  # its machine could not be reached for `lost_after`
    TAKEN_OVER = "taken_over"  # its engine went silent and another clone's took it
    BUDGET = "budget"  # it spent its budget
    TURNS = "turns"  # its agent ran out of turns
    STOPPED = "stopped"  # you stopped it
    GUARD = "guard"  # the guard refused its commit (a path outside the piece's)
    NOT_INSTALLED = "not_installed"  # its agent is not on that machine
    SETUP_FAILED = "setup_failed"
    NO_COMMITS = "no_commits"
    SIGNIN = "signin"  # its agent is not signed in
    SETTINGS = "settings"
    USAGE_LIMIT = "usage_limit"
    TRANSIENT = "transient"  # an overloaded or flaky service: worth a try in a minute
    CHECK_FAILED = "check_failed"  # landing: the check failed on it
    CONFLICT = "conflict"  # landing: it conflicts with the lead branch
    REFUSED = "refused"  # landing: the queue refused it
    HELD = "held"  # landing: held for you


class RunState(StrEnum):
    """A run's state as its runner reports it (`shipped/reap._job_status`), and as the engine calls a machine
    it could not ask."""

    RUNNING = "running"
    FINISHED = "finished"  # its result.json is written
    DEAD = "dead"  # its runner ended without a result
    MISSING = "missing"  # no such run there
    STOPPING = "stopping"
    UNREACHABLE = "unreachable"  # the engine's word: its machine did not answer


class LeadState(StrEnum):
    """A headless lead's session, as `git balanced lead status` shows it (`kit/headless.py` writes it)."""

    STARTING = "starting"
    IN_A_TURN = "in a turn"
    WAITING = "waiting"  # for news in its inbox
    PAUSED = "paused"  # for its plan's usage limit
    STOPPED = "stopped"
    ENDED = "ended"  # its process is gone without being stopped


class CheckState(StrEnum):
    """What the check said of what would ship (`git balanced review`)."""

    PASSED = "passed"
    FAILED = "failed"
    NONE = "none"  # no check is set, or nothing would ship


class Action(StrEnum):
    """What the engine asks a machine's runner to do (`shipped/runner.ACTIONS` on the other side)."""

    START = "start"
    STATUS = "status"
    STOP = "stop"
    LOG = "log"
    CLEANUP = "cleanup"
    FORWARDED = "forwarded"
    ANSWER = "answer"
    TELL = "tell"


class PrState(StrEnum):
    """A pull request as its forge has it."""

    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"


class ChecksState(StrEnum):
    """What a pull request's check runs on its head say, together."""

    PASSING = "passing"
    FAILING = "failing"
    PENDING = "pending"  # some still run, none failed yet
    NONE = "none"  # no check run reported on the head


class Trouble(StrEnum):
    """What on a pull request wants a fix from the session that opened it."""

    CHECKS = "checks failed"
    CHANGES = "changes requested"
    CONFLICT = "conflict with the base"
