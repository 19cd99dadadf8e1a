"""Watching the lead's open pull requests (with `[pr] fix = true`): every 2 minutes the engine asks the forge,
conditionally, about each one (an unchanged one is a 304, which costs nothing against the rate limit).

A failed check run, a review asking for changes, or a conflict with the base is recorded once per head; it
goes to the session that made the work (forge/fixing.py) at most `[pr] fixes_a_day` times a day, and past
that to the person only (the board says so). A new failing head re-arms it; passing checks reset the count.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from git_balanced import process, ui
from git_balanced.errors import BalancedError
from git_balanced.forge import fixing
from git_balanced.forge.base import CheckRun, Forge, PullRequest, Review, checks_state, decision
from git_balanced.forge.events import Closed, Looked, Merged, Passed, Sent, ToYou, Troubled, record
from git_balanced.forge.prs import Pr, of_lead
from git_balanced.forge.where import open_forge
from git_balanced.lead import Lead, settings_at
from git_balanced.vocab import ChecksState, PrState, Trouble

if TYPE_CHECKING:
    from git_balanced.settings import Settings

INTERVAL = 120.0  # seconds between two looks at a lead's pull requests


class _Looked:
    """When this process last looked at each lead's pull requests."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}


def engine_tick(lead: Lead, settings: Settings, *, at: float | None = None) -> None:
    """The engine's turn: look at the lead's open pull requests when 2 minutes have passed, and follow the
    fixes sent. Nothing at all while `[pr] fix` is off or there is no pull request."""
    if not settings.pr.fix or not lead.repo.list_refs("refs/balanced/prs/"):
        return
    opened = of_lead(lead, open_only=True)
    for p in opened:
        try:
            fixing.follow(lead, p)
        except BalancedError as exc:  # the check not approved, say: the next pass tries again
            ui.note(f"[balanced] Pull request #{p.number}'s fix is not put to you yet: {exc.message}")
    t = time.time() if at is None else at
    looked = process.part(_Looked).at
    key = f"{lead.repo.common_dir}:{lead.branch}"
    if not opened or t - looked.get(key, 0.0) < INTERVAL:
        return
    looked[key] = t
    forges: dict[str, Forge] = {}
    for p in opened:
        remote = str(p.fields.get("remote") or "origin")
        try:
            forge = forges.get(remote) or forges.setdefault(remote, open_forge(lead, remote))
            look(lead, settings, forge, p)
        except BalancedError as exc:  # the forge out of reach, a token gone: the next look tries again
            ui.note(f"[balanced] Pull request #{p.number} was not looked at: {exc.message}")


def refresh(lead: Lead) -> None:
    """Look at the lead's open pull requests now, recording what changed but sending nothing (`review`); a
    forge out of reach is said, and what the chains hold is shown."""
    settings = settings_at(lead.repo, lead.branch)
    forges: dict[str, Forge] = {}  # one a remote, as the engine's look: its token is read once
    for p in of_lead(lead, open_only=True):
        remote = str(p.fields.get("remote") or "origin")
        try:
            forge = forges.get(remote) or forges.setdefault(remote, open_forge(lead, remote))
            look(lead, settings, forge, p, act=False)
        except BalancedError as exc:
            ui.note(f"Pull request #{p.number} was not looked at: {exc.message} (what it had is shown)")


def look(lead: Lead, settings: Settings, forge: Forge, p: Pr, *, act: bool = True) -> None:
    """One pull request: its state, checks, review decision and mergeability; with `act`, a new trouble goes
    out once (to its session while `[pr] fix` is on, else to you)."""
    pr, _ = forge.pull(p.number)
    if pr.state != PrState.OPEN:
        ev = Merged() if pr.state == PrState.MERGED else Closed()
        record(lead.repo, p.number, ev, f"Pull request #{p.number} {pr.state}")
        return
    runs, _ = forge.checks(pr.head_sha)
    reviews = forge.reviews(p.number)
    checks, dec = checks_state(runs), decision(reviews)
    f = p.fields
    if (f.get("head_sha"), f.get("checks"), f.get("decision"), f.get("conflicts")) != \
            (pr.head_sha, checks, dec, pr.conflicts):
        record(lead.repo, p.number, Looked(head_sha=pr.head_sha, checks=checks, decision=dec,
                                           conflicts=pr.conflicts),
               f"Pull request #{p.number}: checks {checks} · {dec}" + (" · conflicts" if pr.conflicts else ""))
    passed = p.newest("checks passed")
    if checks == ChecksState.PASSING and (passed is None or passed.data.get("head_sha") != pr.head_sha):
        record(lead.repo, p.number, Passed(head_sha=pr.head_sha), f"Pull request #{p.number}: checks passed")
    if not act:
        return
    trouble, said = _trouble(forge, pr, runs, checks, reviews)
    if trouble is None or _told(p, trouble, pr.head_sha):
        return
    record(lead.repo, p.number, Troubled(trouble=trouble, head_sha=pr.head_sha, said=said),
           f"Pull request #{p.number}: {trouble} on {pr.head_sha[:7]}")
    p = next(x for x in of_lead(lead, open_only=True) if x.number == p.number)
    today, most = p.fixes_today(), settings.pr.fixes_a_day
    if today >= most or not settings.pr.fix:
        why = f"{today} fixes sent today already, the most `[pr] fixes_a_day` allows" if settings.pr.fix else \
            "`[pr] fix` is off"
        record(lead.repo, p.number, ToYou(trouble=trouble, head_sha=pr.head_sha, why=why),
               f"Pull request #{p.number}: {trouble}, yours ({why})")
        return
    try:
        to = fixing.send(lead, settings, pr, trouble, said, str(p.fields.get("remote") or "origin"))
    except BalancedError as exc:  # no machine can take its worker, say: the news is the person's
        why = f"its session could not be given it: {exc.message}"
        record(lead.repo, p.number, ToYou(trouble=trouble, head_sha=pr.head_sha, why=why),
               f"Pull request #{p.number}: {trouble}, yours ({why})")
        return
    record(lead.repo, p.number, Sent(trouble=trouble, head_sha=pr.head_sha, to=to, fixes_today=today + 1),
           f"Pull request #{p.number}: {trouble}, sent to its session ({to})")


def _told(p: Pr, trouble: Trouble, head: str) -> bool:
    """Whether this trouble on this head was recorded already: each one goes out once."""
    return any(e.event == str(trouble) and e.data.get("head_sha") == head for e in p.events)


def _trouble(forge: Forge, pr: PullRequest, runs: list[CheckRun], checks: ChecksState,
             reviews: list[Review]) -> tuple[Trouble | None, str]:
    """The first thing that wants a fix, and its words: failed runs with their logs, the requested changes
    with the reviewers' comments, or the conflict."""
    if checks == ChecksState.FAILING:
        parts = [f"{r.name} failed ({r.url}):\n{forge.failure_text(r)}" for r in runs if r.failed]
        return Trouble.CHECKS, "\n\n".join(parts)
    asking = [r for r in reviews if r.state == "CHANGES_REQUESTED"]
    if asking and decision(reviews) == "changes requested":
        r = asking[-1]
        lines = [f"{r.user} asked for changes: {r.body}".strip()] + [f"  {c}" for c in r.comments]
        return Trouble.CHANGES, "\n".join(lines)
    if pr.conflicts:
        return Trouble.CONFLICT, (f"Merging {pr.base_ref} into {pr.head_ref} conflicts: bring {pr.base_ref} in "
                                  "(merge it), resolve the conflicts, and commit the merge.")
    return None, ""
