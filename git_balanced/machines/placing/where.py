"""Where pieces go (DESIGN §7): the one entry point of placement, for a plan being stored, a piece whose
machine cannot run it, and a piece tried again on another machine.

The machines are read from what is recorded (seats.py), then asked over SSH whether they answer and what they
have of the agents wanted; each piece then takes the least busy machine that can run it (placement.py), the
account with more room winning among equals (accounts.py). The pieces are placed one after another, each
counted on its machine before the next, so a plan's pieces spread.

    placed = place(lead, [Want("claude"), Want("codex", machine="gpu-box")], reserve=20)
    placed.each[0].machine, placed.each[0].why
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from git_balanced.lead import Lead
from git_balanced.machines.inventory.placement import Placement, Seat, counted
from git_balanced.machines.placing import accounts
from git_balanced.machines.placing.seats import probed, seats, with_agents


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
    found = seats(lead, running)
    found = probed(lead.repo, found)
    found = with_agents(found, {w.agent for w in wants})
    now = list(found)
    each = []
    for w in wants:
        where = accounts.choose_with_room(lead.repo, [s for s in now if s.name != w.not_on], agent=w.agent,
                                          reserve=reserve, explicit=w.machine)
        now = counted(now, where.machine)
        each.append(where)
    return Placed(tuple(each), tuple(found))
