"""Where pieces go (DESIGN §7): the one entry point of placement, for a plan being stored, a piece whose
machine cannot run it, and a piece tried again on another machine.

The machines are read from what is recorded (seats.py), then asked over SSH whether they answer and what they
have of the agents wanted. The settings' `placement` decides among them: "balanced" (the default) gives each
piece the least busy ticked machine that can run it (placement.py), the account with more room winning among
equals (accounts.py); "local" puts every piece here; "single" on the one `machine` named. With `fallback`, a
piece whose machines cannot take it now runs here instead of waiting. A machine the plan names wins over all of
them and never falls back. The pieces are placed one after another, each counted on its machine before the
next, so a plan's pieces spread.

    placed = place(lead, [Want("claude"), Want("codex", machine="gpu-box")], reserve=20)
    placed.each[0].machine, placed.each[0].why
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from git_balanced.lead import Lead, settings_at
from git_balanced.machines.inventory.placement import Placement, Seat, counted
from git_balanced.machines.inventory.records import LOCAL
from git_balanced.machines.placing import accounts
from git_balanced.machines.placing.seats import probed, seats, with_agents
from git_balanced.settings_view import SETTINGS_PATH

if TYPE_CHECKING:
    from git_balanced.settings import BalancedSettings


@dataclass(frozen=True)
class Want:
    """One piece to place: its agent, the machine its plan names (never fallen back from), and a machine it is
    not to go to (the one it failed on, when it is tried again elsewhere)."""

    agent: str
    machine: str | None = None
    not_on: str | None = None


@dataclass(frozen=True)
class Placed:
    """Where each piece goes and why, in the order asked, and the machines as placement found them (before
    these pieces)."""

    each: tuple[Placement, ...]
    seats: tuple[Seat, ...]

    @property
    def one(self) -> Placement:
        """The placement of the only piece asked about."""
        (only,) = self.each
        return only


def place(lead: Lead, wants: Sequence[Want], *, reserve: int, running: dict[str, int] | None = None) -> Placed:
    """Place `wants` one after another on the machines there are now (asked over SSH first); `running` is
    the count of live workers per machine when the caller has it already."""
    mode = settings_at(lead.repo, lead.branch).balanced
    found = seats(lead, running)
    named = {"local": LOCAL, "single": mode.machine}.get(mode.placement)
    if named:  # the machine the settings name is asked as a ticked one would be: the settings tick it
        found = [replace(s, ticked=True) if s.name == named else s for s in found]
    found = probed(lead.repo, found)
    found = with_agents(found, {w.agent for w in wants})
    now = list(found)
    each = []
    for w in wants:
        where = _one(lead, [s for s in now if s.name != w.not_on], w, mode, reserve)
        now = counted(now, where.machine)
        each.append(where)
    return Placed(tuple(each), tuple(found))


def chosen_by_settings(mode: BalancedSettings, machine: str) -> bool:
    """Whether the settings put pieces on `machine` themselves (placement "local" or "single", or the fallback
    here), so that it takes them ticked or not."""
    if machine == LOCAL:
        return mode.placement == "local" or mode.fallback
    return mode.placement == "single" and machine == mode.machine


def _one(lead: Lead, pool: list[Seat], w: Want, mode: BalancedSettings, reserve: int) -> Placement:
    """Where one piece goes, by the plan's machine, else by the settings' placement; the words say which."""
    if w.machine:
        return accounts.choose_with_room(lead.repo, pool, agent=w.agent, reserve=reserve, explicit=w.machine)
    said = f'placement = "{mode.placement}" in {SETTINGS_PATH}'
    if mode.placement == "local":
        why = _cannot(pool, LOCAL, w.agent)
        return Placement(LOCAL, f"{LOCAL}: {said} (this machine only)") if not why else \
            Placement("", f"{said}, but {LOCAL} cannot take it: {why}; it waits")
    if mode.placement == "single":
        name = str(mode.machine)
        why = _cannot(pool, name, w.agent)
        if not why:
            return Placement(name, f"{name}: {said} names it")
        return _fallback(pool, w.agent, mode, f"{said} names {name}, but {why}", f"it waits for {name}")
    p = accounts.choose_with_room(lead.repo, pool, agent=w.agent, reserve=reserve)
    if not p.waits or not mode.fallback:  # the balanced rule's own words, as they always were
        return p
    return _fallback(pool, w.agent, mode, f"{said} found no machine: {p.why}", "it waits")


def _cannot(pool: list[Seat], name: str, agent: str) -> str:
    """Why the machine `name` cannot take a piece of `agent` now (ticks aside: the settings name it), or ""."""
    s = next((s for s in pool if s.name == name), None)
    if s is None:
        return f"it is not a machine you added (`git balanced machines add {name}`), or its last attempt failed there"
    if not s.ready:
        return s.why_not or "it is not ready"
    if not s.reachable:
        return s.why_not or "it cannot be reached"
    return s.cannot_run(agent)


def _fallback(pool: list[Seat], agent: str, mode: BalancedSettings, why: str, waits: str) -> Placement:
    """This machine, when `fallback` is on and it can run the piece; else the piece waits, saying why."""
    if not mode.fallback:
        return Placement("", f"{why}; {waits} (fallback = false)")
    here = _cannot(pool, LOCAL, agent)
    if here:
        return Placement("", f"{why}; fallback = true, but {LOCAL} cannot take it either: {here}; {waits}")
    return Placement(LOCAL, f"{LOCAL}: {why}; fallback = true puts it on this machine")
