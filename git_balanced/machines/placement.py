"""Placement (DESIGN §7): which machine takes a piece, and why, in words."""

from __future__ import annotations

from dataclasses import dataclass, replace

from git_balanced.errors import BalancedError

WEIGHTS = {"prefer": 100, "normal": 50, "less-often": 25, "manual-only": 0}


@dataclass(frozen=True)
class Seat:
    """A machine as placement sees it."""

    name: str
    preference: str = "normal"
    running: int = 0
    recent: int = 0  # placements made but not visible as running yet
    ready: bool = True
    reachable: bool = True
    ticked: bool = True
    setup_done: bool = False
    why_not: str = ""

    @property
    def load(self) -> int:
        return self.running + self.recent

    @property
    def weight(self) -> int:
        return WEIGHTS.get(self.preference, 50)


@dataclass(frozen=True)
class Placement:
    machine: str
    why: str


def _key(s: Seat) -> tuple[float, int, int, int, int, str]:
    return ((s.load + 1) / s.weight, s.load, -s.weight, 0 if s.setup_done else 1, 0 if s.name == "local" else 1,
            s.name)


def place(seats: list[Seat], *, explicit: str | None = None, total_running: int = 0, cap: int = 10) -> Placement:
    """Pick a machine: minimise (load + 1) / weight among the ticked, reachable, ready ones under the cap.

    An explicit machine never falls back. The pick counts as a recent placement in `seats` (the list is
    updated in place), so placing a plan's pieces one after another spreads them. Raises BalancedError
    when nothing can take the piece.
    """
    p = _choose(seats, explicit)
    for i, s in enumerate(seats):
        if s.name == p.machine:
            seats[i] = replace(s, recent=s.recent + 1)
    return p


def _choose(seats: list[Seat], explicit: str | None) -> Placement:
    by_name = {s.name: s for s in seats}
    if explicit:
        s = by_name.get(explicit)
        if s is None:
            raise BalancedError(f"There is no machine named {explicit!r}.",
                                hint="see `git balanced machines`, or add it with `git balanced machines add`.")
        if not s.ticked or not s.reachable or not s.ready:
            why = ("it is not ticked" if not s.ticked else s.why_not or
                   ("it cannot be reached" if not s.reachable else "it is not ready"))
            return Placement(s.name, f"{s.name}: named by the plan, but {why}; it waits for that machine")
        return Placement(s.name, f"{s.name}: named by the plan")
    able = [s for s in seats if s.ticked and s.reachable and s.ready and s.preference != "manual-only"]
    away = [s for s in seats if s.ticked and s.ready and not s.reachable and s.preference != "manual-only"]
    skipped = "".join(f"; {s.name} is skipped: {s.why_not or 'it cannot be reached'}" for s in away)
    if not able:
        local = by_name.get("local")
        if local is not None:
            return Placement("local", "local: no other machine is ready, so this one" + skipped)
        raise BalancedError("No ticked machine is ready to take work.",
                            hint="tick one with `git balanced tick local`, or run `git balanced ready`.")
    best = min(able, key=_key)
    return Placement(best.name, _words(best, [s for s in able if s is not best]) + skipped)


def _count(s: Seat) -> str:
    """The load in words: running workers, and the pieces placed there a moment ago (this plan's own)."""
    return f"{s.running}" + (f", and {s.recent} placed just now" if s.recent else "")


def _running(s: Seat) -> str:
    return ("1 agent" if s.running == 1 else f"{s.running} agents") + " running there" + \
        (f", {s.recent} placed just now" if s.recent else "")


def _words(best: Seat, others: list[Seat]) -> str:
    if not others:
        return f"{best.name}: the only ticked machine ({_running(best)})"
    if all(best.load < o.load for o in others):
        return f"{best.name}: fewest agents running there ({_count(best)})"
    if best.weight > max(o.weight for o in others):
        return f"{best.name}: you prefer it ({_running(best)})"
    if best.setup_done and not all(o.setup_done for o in others):
        return f"{best.name}: as busy as the others, and set up already"
    return f"{best.name}: fewest agents running there ({_count(best)}), first of equals"
