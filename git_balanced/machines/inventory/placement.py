"""The placement rule (DESIGN §7): which of the seats takes a piece, and why, in words. Pure: the seats are
read, never changed, and no machine is asked (placing/where.py gathers them and places a plan's pieces)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from git_balanced.errors import BalancedError

WEIGHTS = {"prefer": 100, "normal": 50, "less-often": 25, "manual-only": 0}
PREFERENCE_WORDS = {"prefer": "you prefer it", "normal": "normal", "less-often": "less often",
                    "manual-only": "manual only"}


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
    lacks: dict[str, str] = field(default_factory=dict)  # agent -> why it cannot run there ("" when it can)

    def cannot_run(self, agent: str | None) -> str:
        """Why this machine cannot run `agent` ("Claude Code is not installed there"), or ""."""
        return self.lacks.get(agent, "") if agent else ""

    @property
    def load(self) -> int:
        return self.running + self.recent

    @property
    def weight(self) -> int:
        return WEIGHTS.get(self.preference, 50)


@dataclass(frozen=True)
class Placement:
    """Where a piece goes and why; `machine` is "" when no machine can take it now (`why` says why)."""

    machine: str
    why: str

    @property
    def waits(self) -> bool:
        return not self.machine


def _key(s: Seat) -> tuple[float, int, int, int, int, str]:
    return ((s.load + 1) / s.weight, s.load, -s.weight, 0 if s.setup_done else 1, 0 if s.name == "local" else 1,
            s.name)


def counted(seats: Sequence[Seat], machine: str) -> list[Seat]:
    """The seats with a piece just placed on `machine` counted as a recent placement there, so that placing a
    plan's pieces one after another spreads them (a new list)."""
    return [replace(s, recent=s.recent + 1) if s.name == machine else s for s in seats]


def able(s: Seat, agent: str | None = None) -> bool:
    """Whether placement may put a piece of `agent` on the machine without being told to."""
    return s.ticked and s.reachable and s.ready and s.preference != "manual-only" and not s.cannot_run(agent)


def _skipped(s: Seat, agent: str | None) -> str:
    """Why a ticked machine takes no piece now, or "" when it is not worth saying (unticked, manual only)."""
    if not s.ticked or s.preference == "manual-only":
        return ""
    if not s.ready:
        return s.why_not or "it is not ready"
    if not s.reachable:
        return s.why_not or "it cannot be reached"
    return s.cannot_run(agent)


def choose(seats: Sequence[Seat], *, explicit: str | None = None, agent: str | None = None) -> Placement:
    """Pick a machine: minimise (load + 1) / weight among the ticked, reachable, ready ones that have `agent`
    installed and signed in. An explicit machine never falls back. When nothing can take the piece, the
    Placement's machine is "" and its words say why each machine was skipped: the piece waits. `seats` is
    left as it is; `counted` makes the list the next piece is placed on."""
    by_name = {s.name: s for s in seats}
    if explicit:
        s = by_name.get(explicit)
        if s is None:
            raise BalancedError(f"There is no machine named {explicit!r}.",
                                hint="see `git balanced machines`, or add it with `git balanced machines add`.")
        if not s.ticked or not s.reachable or not s.ready or s.cannot_run(agent):
            why = ("it is not ticked" if not s.ticked else s.cannot_run(agent) or s.why_not or
                   ("it cannot be reached" if not s.reachable else "it is not ready"))
            return Placement(s.name, f"{s.name}: named by the plan, but {why}; it waits for that machine")
        return Placement(s.name, f"{s.name}: named by the plan")
    fit = [s for s in seats if able(s, agent)]
    # The machines that would have been candidates, and why each is not: those the lead should hear of.
    skipped = [(s.name, why) for s in seats if not able(s, agent) and (why := _skipped(s, agent))]
    said = "; ".join(f"{name}: {why}" for name, why in skipped)
    if not fit:
        if not any(s.ticked and s.preference != "manual-only" for s in seats):
            return Placement("", "no machine is ticked to take pieces: tick one with `git balanced tick NAME`")
        return Placement("", f"no ticked machine can take it now: {said}" if said else
                         "no ticked machine can take it now")
    best = min(fit, key=_key)
    ticked_others = [s for s in seats if s.ticked and s is not best and s.preference != "manual-only"]
    why = _words(best, [s for s in fit if s is not best], bool(ticked_others))
    return Placement(best.name, why + (f"; skipped {said}" if said else ""))


def _count(s: Seat) -> str:
    """The load in words: running workers, and the pieces placed there a moment ago (this plan's own)."""
    return f"{s.running}" + (f", and {s.recent} placed just now" if s.recent else "")


def _running(s: Seat) -> str:
    return ("1 agent" if s.running == 1 else f"{s.running} agents") + " running there" + \
        (f", {s.recent} placed just now" if s.recent else "")


def _words(best: Seat, others: list[Seat], others_ticked: bool) -> str:
    if not others:
        if others_ticked:
            return f"{best.name}: the only ticked machine that can take it ({_running(best)})"
        return f"{best.name}: the only ticked machine ({_running(best)})"
    if all(best.load < o.load for o in others):
        return f"{best.name}: fewest agents running there ({_count(best)})"
    if best.weight > max(o.weight for o in others):
        if best.preference == "prefer":
            return f"{best.name}: you prefer it ({_running(best)})"
        lower = sorted({o.preference for o in others if o.weight < best.weight})
        return f"{best.name}: the others are set to {' or '.join(PREFERENCE_WORDS[p] for p in lower)} " \
               f"({_running(best)})"
    if best.setup_done and not all(o.setup_done for o in others):
        return f"{best.name}: as busy as the others, and set up already"
    return f"{best.name}: fewest agents running there ({_count(best)}), first of equals"
