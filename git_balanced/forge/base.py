"""What a forge is to git balanced: a pull request, its check runs, its reviews, and the calls that read and
write them. GitHub is `github.py`; another forge is one more module with the same methods."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from git_balanced.errors import BalancedError
from git_balanced.vocab import ChecksState, PrState


class ForgeError(BalancedError):
    """A forge refused or could not be reached; the message says which call, what it said, and what to do."""


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: PrState
    title: str
    url: str
    head_ref: str
    head_sha: str
    base_ref: str
    draft: bool = False
    mergeable: bool | None = None  # None while the forge has not worked it out

    @property
    def conflicts(self) -> bool:
        return self.mergeable is False


@dataclass(frozen=True)
class CheckRun:
    id: int
    name: str
    done: bool
    failed: bool
    url: str = ""
    text: str = ""  # the run's output: its title, summary and text as the forge gives them


@dataclass(frozen=True)
class Review:
    user: str
    state: str  # the forge's word: APPROVED, CHANGES_REQUESTED, COMMENTED, ...
    body: str
    comments: tuple[str, ...] = field(default=())  # `path:line: text`, one per line comment of this review


def checks_state(runs: list[CheckRun]) -> ChecksState:
    """The runs together: failing when one failed, pending while one runs, passing when all passed."""
    if not runs:
        return ChecksState.NONE
    if any(r.failed for r in runs):
        return ChecksState.FAILING
    return ChecksState.PASSING if all(r.done for r in runs) else ChecksState.PENDING


def decision(reviews: list[Review]) -> str:
    """The review decision: each reviewer's latest approving or change-requesting review counts."""
    last: dict[str, str] = {}
    for r in reviews:
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            last[r.user] = r.state
    if "CHANGES_REQUESTED" in last.values():
        return "changes requested"
    return "approved" if "APPROVED" in last.values() else "no review yet"


class Forge(Protocol):
    """One forge's repository, as git balanced uses it."""

    kind: str
    repository: str

    def find_open(self, head: str) -> PullRequest | None:
        """The open pull request from branch `head`, if there is one."""

    def open(self, *, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        """Open a pull request from `head` into `base`."""

    def update(self, number: int, *, title: str, body: str) -> PullRequest:
        """Change a pull request's title and body."""

    def pull(self, number: int) -> tuple[PullRequest, bool]:
        """The pull request, and whether it changed since this clone last asked (a conditional request)."""

    def checks(self, sha: str) -> tuple[list[CheckRun], bool]:
        """The check runs on commit `sha`, and whether they changed since last asked."""

    def failure_text(self, run: CheckRun) -> str:
        """What a failed run said: its output and its annotations."""

    def reviews(self, number: int) -> list[Review]:
        """The pull request's reviews, oldest first, each with its line comments."""
