"""What happens to a job, one frozen dataclass per event, and the one way to record one on its chain
(`refs/balanced/jobs/<id>`). A field is named once, here: a misspelt one fails when the event is made, not
silently in the job's `extra`. The reader (state/events.parse_event, the fold) is unchanged, so refs written
before these types, and by other versions, fold as they always did."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from git_balanced.git import Repo
from git_balanced.state import refs
from git_balanced.vocab import Failure, JobState

# What a finished run's result puts on the event that records how it ended (engine/watch._finished builds it).
RAN = frozenset(("exit_code", "head", "commits", "cost_usd", "outcome", "summary", "seconds", "dirty", "tokens",
                 "windows", "subagents", "fetched_ref", "checks"))
_UNSET: Any = object()  # a field left out of the event, as opposed to one set to None (which clears it)


def maybe() -> Any:
    """A field that an event holds only when it is given."""
    return field(default=_UNSET)


@dataclass(frozen=True, kw_only=True)
class JobEvent:
    """One event on a job's chain: its name (`Balanced-Event`), the state it moves the job to, if any, and its
    fields as they are stored (`event.json`'s `data`)."""

    name: ClassVar[str]
    state: ClassVar[JobState | None] = None

    def event_name(self) -> str:
        return self.name

    def event_state(self) -> JobState | None:
        return self.state

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is _UNSET or f.metadata.get("not_stored"):
                continue
            if f.name == "ran":
                out.update(value)
            else:
                out[f.name] = value
        return out


def _ran(value: Mapping[str, Any]) -> Mapping[str, Any]:
    unknown = sorted(set(value) - RAN)
    if unknown:
        raise TypeError(f"a run's result has no field {', '.join(unknown)}; it holds {', '.join(sorted(RAN))}")
    return value


@dataclass(frozen=True, kw_only=True)
class Placed(JobEvent):
    """A new job, queued: its piece's fields (the caller checks them against `jobs.Job`)."""

    name: ClassVar[str] = "placed"
    state: ClassVar[JobState | None] = JobState.QUEUED
    piece_fields: Mapping[str, Any] = field(metadata={"not_stored": True})

    def data(self) -> dict[str, Any]:
        return dict(self.piece_fields)


@dataclass(frozen=True, kw_only=True)
class Claimed(JobEvent):
    """This clone's engine claims a queued job (jobs.claim adds the node and the time)."""

    name: ClassVar[str] = "claimed"


@dataclass(frozen=True, kw_only=True)
class TakenOver(JobEvent):
    """Another clone's engine went silent: this one takes its job over, and the old attempt counts as lost."""

    name: ClassVar[str] = "taken-over"
    state: ClassVar[JobState | None] = JobState.LOST
    reason: str
    failure: Failure = Failure.TAKEN_OVER


@dataclass(frozen=True, kw_only=True)
class Started(JobEvent):
    name: ClassVar[str] = "started"
    state: ClassVar[JobState | None] = JobState.RUNNING
    pid: int | None
    worktree: str
    started_at: float
    node: str


@dataclass(frozen=True, kw_only=True)
class Finished(JobEvent):
    """Its worker committed: it goes to the landing."""

    name: ClassVar[str] = "finished"
    state: ClassVar[JobState | None] = JobState.FINISHED
    ran: Mapping[str, Any]
    budget_stopped: bool = maybe()
    host_fetch: bool = maybe()

    def __post_init__(self) -> None:
        _ran(self.ran)


@dataclass(frozen=True, kw_only=True)
class Reported(JobEvent):
    """A worker of a piece that writes nothing (`writes: none`) finished: its report is the result, nothing lands."""

    name: ClassVar[str] = "reported"
    state: ClassVar[JobState | None] = JobState.REPORTED
    ran: Mapping[str, Any]

    def __post_init__(self) -> None:
        _ran(self.ran)


@dataclass(frozen=True, kw_only=True)
class Failed(JobEvent):
    """An attempt ended without landing. Its event is named after how it failed (`failure`) unless `event` says
    otherwise; its state is failed, stopped or lost."""

    name: ClassVar[str] = "failed"
    failure: Failure
    reason: str
    ended: JobState = field(default=JobState.FAILED, metadata={"not_stored": True})
    event: str = field(default="", metadata={"not_stored": True})
    ran: Mapping[str, Any] = maybe()
    decided: bool = maybe()
    budget_stopped: bool = maybe()
    final: str = maybe()

    def __post_init__(self) -> None:
        if self.ended not in (JobState.FAILED, JobState.STOPPED, JobState.LOST):
            raise ValueError(f"an attempt that failed is failed, stopped or lost, not {self.ended}")
        if self.ran is not _UNSET:
            _ran(self.ran)

    def event_name(self) -> str:
        return self.event or self.failure

    def event_state(self) -> JobState | None:
        return self.ended


@dataclass(frozen=True, kw_only=True)
class Paused(JobEvent):
    """Its plan's usage limit stopped it: it carries on at `resume_at`."""

    name: ClassVar[str] = "paused"
    state: ClassVar[JobState | None] = JobState.PAUSED
    ran: Mapping[str, Any]
    reset_at: float
    resume_at: float
    reset_known: bool

    def __post_init__(self) -> None:
        _ran(self.ran)


@dataclass(frozen=True, kw_only=True)
class Moved(JobEvent):
    """Its agent's limit resets too late: the piece goes on as `next`, a worker of another agent."""

    name: ClassVar[str] = "moved"
    state: ClassVar[JobState | None] = JobState.RETRIED
    ran: Mapping[str, Any]
    next: str
    moved_to: str
    reason: str
    reset_at: float
    decided: bool = True

    def __post_init__(self) -> None:
        _ran(self.ran)


@dataclass(frozen=True, kw_only=True)
class Resuming(JobEvent):
    """After its usage limit: a new run of the same job, told to carry on; what it spent so far is kept."""

    name: ClassVar[str] = "resuming"
    run_no: int
    resume_note: str
    spent_before: float
    cost_usd: float | None = None


@dataclass(frozen=True, kw_only=True)
class Noted(JobEvent):
    """Something the engine decided or told once about a queued job: where it goes, what it waits for."""

    name: ClassVar[str] = "noted"
    machine: str = maybe()
    agent: str = maybe()
    model: str | None = maybe()
    why: str = maybe()
    moved_from: str = maybe()
    retry_reason: str = maybe()
    waits_for: str = maybe()
    waits_key: str = maybe()
    told_reserve: str = maybe()
    told_dirty: bool = maybe()
    told_waiting: bool = maybe()


@dataclass(frozen=True, kw_only=True)
class WaitsForLand(JobEvent):
    """It finished, and with no check set it waits for `git balanced land`."""

    name: ClassVar[str] = "waiting"
    told_no_check: bool = True


@dataclass(frozen=True, kw_only=True)
class GaveUp(JobEvent):
    name: ClassVar[str] = "gave-up"
    final: str
    decided: bool = True


@dataclass(frozen=True, kw_only=True)
class Retried(JobEvent):
    """A newer attempt, `next`, carries on its piece."""

    name: ClassVar[str] = "retried"
    state: ClassVar[JobState | None] = JobState.RETRIED
    next: str
    decided: bool = True


@dataclass(frozen=True, kw_only=True)
class Asked(JobEvent):
    name: ClassVar[str] = "asked"
    asked: str
    asked_text: str


@dataclass(frozen=True, kw_only=True)
class Answered(JobEvent):
    name: ClassVar[str] = "answered"
    answered: str
    answered_by: str
    answered_decision: str | None = maybe()  # allow or deny, for a command or an edit it asked; None for words
    asked: None = None  # the question is no longer open


@dataclass(frozen=True, kw_only=True)
class Dismissed(JobEvent):
    name: ClassVar[str] = "dismissed"
    dismissed: bool = True


def record(repo: Repo, job_id: str, ev: JobEvent, subject: str) -> None:
    """Record one event on a job's chain; `subject` is the line `git log` shows of it."""
    refs.append(repo, refs.ref_for("jobs", job_id), ev.event_name(), subject, ev.data(), state=ev.event_state())
