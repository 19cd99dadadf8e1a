"""What happens to a pull request, one frozen dataclass per event, and the one way to record one on its chain
(`refs/balanced/prs/<number>`, readable with `git log`). As a job's events (job_events.py): a misspelt field
fails where the event is made."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from git_balanced.git import Repo
from git_balanced.state import refs
from git_balanced.vocab import ChecksState, PrState, Trouble

KIND = "prs"


def ref_of(number: int) -> str:
    return f"refs/balanced/{KIND}/{number}"


@dataclass(frozen=True, kw_only=True)
class PrEvent:
    """One event on a pull request's chain: its name, the state it moves the pull request to, if any, and its
    fields as stored."""

    name: ClassVar[str]
    state: ClassVar[PrState | None] = None

    def data(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class Opened(PrEvent):
    """`ship --pr` opened it (or found it open for the branch and took it on)."""

    name: ClassVar[str] = "opened"
    state: ClassVar[PrState | None] = PrState.OPEN
    number: int
    url: str
    repository: str
    lead: str
    branch: str
    base: str
    remote: str
    head_sha: str
    title: str
    draft: bool
    reused: bool


@dataclass(frozen=True, kw_only=True)
class Looked(PrEvent):
    """The watcher saw its checks, review decision or mergeability change (the board shows the newest)."""

    name: ClassVar[str] = "looked"
    head_sha: str
    checks: ChecksState
    decision: str
    conflicts: bool


@dataclass(frozen=True, kw_only=True)
class Troubled(PrEvent):
    """Something wants a fix: failed checks, requested changes, a conflict with the base. Its event is named
    after the trouble (`checks failed`, ...)."""

    name: ClassVar[str] = "troubled"
    trouble: Trouble
    head_sha: str
    said: str  # the failing part of the logs, the reviewers' comments, or the conflict

    def event_name(self) -> str:
        return str(self.trouble)


@dataclass(frozen=True, kw_only=True)
class Sent(PrEvent):
    """The trouble went to the session that opened it: the headless lead, or a worker on the branch."""

    name: ClassVar[str] = "sent"
    trouble: Trouble
    head_sha: str
    to: str  # "lead" or the worker's job id
    fixes_today: int


@dataclass(frozen=True, kw_only=True)
class ToYou(PrEvent):
    """A trouble past the day's fixes (or with fixing off): it is the person's, who hears it in the inbox."""

    name: ClassVar[str] = "to you"
    trouble: Trouble
    head_sha: str
    why: str


@dataclass(frozen=True, kw_only=True)
class Fixed(PrEvent):
    """Its session ended with a commit: it waits under Now as `Ready to push`."""

    name: ClassVar[str] = "fixed"
    commit: str
    row: str


@dataclass(frozen=True, kw_only=True)
class Pushed(PrEvent):
    """`ship` pushed its branch again: the pull request has a new head."""

    name: ClassVar[str] = "pushed"
    head_sha: str


@dataclass(frozen=True, kw_only=True)
class Passed(PrEvent):
    """Its checks passed on its head: the day's count of fixes starts again."""

    name: ClassVar[str] = "checks passed"
    head_sha: str


@dataclass(frozen=True, kw_only=True)
class Merged(PrEvent):
    """Merged on the forge (not `merged`: that name is a merge of two chains of a ref, state/events.py)."""

    name: ClassVar[str] = "merged on the forge"
    state: ClassVar[PrState | None] = PrState.MERGED


@dataclass(frozen=True, kw_only=True)
class Closed(PrEvent):
    name: ClassVar[str] = "closed on the forge"
    state: ClassVar[PrState | None] = PrState.CLOSED


def record(repo: Repo, number: int, ev: PrEvent, subject: str) -> None:
    """Record one event on the pull request's chain; `subject` is the line `git log` shows of it."""
    name = ev.event_name() if isinstance(ev, Troubled) else ev.name
    refs.append(repo, ref_of(number), name, subject, ev.data(), state=ev.state)
