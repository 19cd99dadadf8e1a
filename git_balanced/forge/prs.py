"""The lead's pull requests read back from their chains: what `review` and the board show of each (number,
state, checks, review decision), and what the watcher needs (the day's fixes, what was sent for which head)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from git_balanced import process
from git_balanced.forge.events import KIND, ref_of
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.state import cache, refs
from git_balanced.state.events import Event
from git_balanced.vocab import PrState

DAY = 24 * 3600.0


@dataclass(frozen=True)
class Pr:
    """One pull request as its chain has it."""

    number: int
    state: str
    fields: dict[str, Any]
    events: tuple[Event, ...]

    @property
    def is_open(self) -> bool:
        return self.state == PrState.OPEN

    @property
    def last(self) -> str:
        return self.events[-1].event if self.events else ""

    def newest(self, *names: str) -> Event | None:
        return next((e for e in reversed(self.events) if e.event in names), None)

    def fixes_today(self, now: float | None = None) -> int:
        """Fixes sent in the last day since its checks last passed."""
        at = time.time() if now is None else now
        passed = self.newest("checks passed")
        since = max(at - DAY, passed.time if passed else 0.0)
        return sum(1 for e in self.events if e.event == "sent" and e.time > since)

    def words(self) -> str:
        """`#12 open · checks failing · changes requested · conflicts with main`, and what its session does."""
        f = self.fields
        bits = [f"#{self.number} {self.state}"]
        if self.is_open:
            bits += [f"checks {f.get('checks') or 'not looked at yet'}", str(f.get("decision") or "no review yet")]
            if f.get("conflicts"):
                bits.append(f"conflicts with {f.get('base')}")
        return " · ".join(bits)


class _Chains(process.Bounded[str, tuple[str, tuple[Event, ...]]]):
    """The events of each pull request's chain this process read, with the tip they were read at."""

    KEEP = 256


def all_prs(repo: Repo, *, open_only: bool = False, branch: str | None = None) -> dict[int, Pr]:
    """The pull requests of this clone (the open ones, those of `branch`), by number, with their events: the
    folded states from the cache, and the chains only of those asked for (a merged or closed one costs nothing
    then; an unchanged chain is not read again, one that grew only its new commits)."""
    out = {}
    for name, st in cache.read_all(repo, KIND).items():
        if not name.isdigit() or (open_only and st["state"] != PrState.OPEN) or \
                (branch is not None and st["fields"].get("lead") != branch):
            continue
        n = int(name)
        tip = repo.read_ref(ref_of(n))
        if tip:
            out[n] = Pr(n, str(st["state"]), dict(st["fields"]), _events(repo, ref_of(n), tip))
    return out


def _events(repo: Repo, ref: str, tip: str) -> tuple[Event, ...]:
    """The chain's events at `tip`: as read before when it did not move; when it grew, the old events and the
    commits read since (the old tip behind the new one), else read whole."""
    held = process.part(_Chains)
    key = f"{repo.common_dir}:{ref}"
    old = held.get(key)
    if old is not None and old[0] == tip:
        return old[1]
    if old is not None and repo.is_ancestor(old[0], tip):
        new = refs.read_chain(repo, tip, {e.sha for e in old[1]} | {old[0]})
        events = tuple(sorted((*old[1], *new), key=Event.sort_key))
    else:
        events = tuple(refs.read_chain(repo, tip))
    held.put(key, (tip, events))
    return events


def of_lead(lead: Lead, *, open_only: bool = False) -> list[Pr]:
    """The lead's pull requests, oldest first."""
    return [p for _, p in sorted(all_prs(lead.repo, open_only=open_only, branch=lead.branch).items())]


def status_line(p: Pr) -> str:
    """What its session does about it, when something: `Checks failed · sent to its session`."""
    last = p.newest("checks failed", "changes requested", "conflict with the base", "sent", "to you", "fixed",
                    "pushed", "checks passed")
    if last is None or last.event in ("pushed", "checks passed"):
        return ""
    if last.event == "sent":
        return f"{str(last.data.get('trouble', '')).capitalize()} · sent to its session ({last.data.get('to')})"
    if last.event == "to you":
        return f"{str(last.data.get('trouble', '')).capitalize()} · yours: {last.data.get('why')}"
    if last.event == "fixed":
        return f"Fixed by its session · ready to push ({last.data.get('row')})"
    return last.event.capitalize()


def board_items(lead: Lead) -> dict[str, list[dict[str, Any]]]:
    """Each open pull request under Now, with what its session does about it."""
    out = []
    for p in of_lead(lead, open_only=True):
        status = status_line(p)
        text = f"⇅ pull request {p.words()}  {p.fields.get('url')}" + (f"\n      {status}" if status else "")
        out.append({"kind": "pr", "number": p.number, "text": text, "state": p.state, "status": status,
                    **{k: p.fields.get(k) for k in ("url", "checks", "decision", "conflicts", "head_sha")}})
    return {"now": out} if out else {}
