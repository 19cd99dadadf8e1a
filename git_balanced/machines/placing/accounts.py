"""Plan usage windows per account, and the reserve kept of each (DESIGN §8).

An account is the identity the agent's CLI reports for its sign-in (`claude:ada@example.com`, from
`claude auth status`; agents_probe.py asks it); when the CLI names none, the agent signed in on a machine
(`claude@local`). Each run's outcome brings the windows its agent reported (Claude's `rate_limit_event`s,
Codex's `rate_limits` read from its session file by the meter; Pi reports none). They are kept per user in
`$XDG_STATE_HOME/git-balanced/accounts.json` until their reset passes, so every repository and machine on
one account shares what any of them learnt. `reserve` keeps part of every window
for you: an account whose window is used past `100 - reserve` percent takes no new workers, nor does one on
extra usage (paid beyond its plan: agents/extra_usage.py), whatever the reserve.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_balanced import knobs
from git_balanced.agents import extra_usage
from git_balanced.files import Flock, write_json
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.inventory.placement import Placement, Seat, able, choose
from git_balanced.machines.prepare.agents_probe import configured_agents
from git_balanced.ui import clock

if TYPE_CHECKING:
    from git_balanced.settings import Settings

STATE_FILE = "accounts.json"
MOVE_AFTER = 1800.0  # a reset further away than this moves the piece to another agent with room
UNDATED_FOR = 3600.0  # a window reported without a reset time counts for an hour
# Tests shorten the waits; a user has no reason to.
ENV_MARGIN = knobs.RESUME_MARGIN.name
ENV_UNKNOWN = knobs.UNKNOWN_RESET.name

AGENT_NAMES = {"claude": "Claude", "codex": "Codex", "pi": "Pi", "shell": "The shell agent"}
WINDOW_NAMES = {"five_hour": "5-hour", "seven_day": "7-day", "seven_day_opus": "7-day Opus",
                "seven_day_sonnet": "7-day Sonnet", "limit": "usage", extra_usage.EXTRA: "extra-usage"}


def agent_name(agent: str) -> str:
    """`Claude`, `Codex` or `Pi`, as the lead reads it."""
    return AGENT_NAMES.get(agent, agent)


def resume_margin() -> float:
    """Seconds between a limit's reset and the worker going on (a minute)."""
    return knobs.seconds(knobs.RESUME_MARGIN)


def unknown_reset() -> float:
    """Seconds to wait when the agent did not say when its limit resets (Pi: an hour)."""
    return knobs.seconds(knobs.UNKNOWN_RESET)


def account(agent: str, machine: str) -> str:
    """The key of the account an agent uses on a machine: the identity its CLI reported, else agent@machine."""
    from git_balanced.machines.prepare.agents_probe import kept

    who = ((kept().get(machine, {}).get("agents") or {}).get(agent) or {}).get("account")
    return f"{agent}:{who}" if who else f"{agent}@{machine}"


# -- state ---------------------------------------------------------------------------------------------------

def _path(repo: Repo) -> Any:
    """The user's file (the repository is not part of an account: two of them share their windows)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    folder = os.path.join(base, "git-balanced")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, STATE_FILE)


def load(repo: Repo) -> dict[str, dict[str, Any]]:
    """Every account's windows: {account: {"windows": {type: window}}}; an unreadable file counts as empty."""
    try:
        with open(_path(repo)) as fh:
            data = json.load(fh)
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(repo: Repo, data: dict[str, dict[str, Any]]) -> None:
    write_json(_path(repo), data, indent=1, sort_keys=True)


def _live(window: dict[str, Any], now: float) -> bool:
    reset = window.get("resets_at")
    if reset:
        return float(reset) > now
    return now - float(window.get("seen_at") or 0) < UNDATED_FOR


def record(repo: Repo, agent: str, machine: str, windows: list[dict[str, Any]], *,
           limited_until: float | None = None, now: float | None = None) -> None:
    """Keep the windows an agent's run reported; a refusal for the plan's limit counts as a full window."""
    now = time.time() if now is None else now
    seen = [dict(w) for w in windows if w.get("type") and w.get("used_percent") is not None]
    if limited_until is not None:
        seen.append({"type": "limit", "used_percent": 100.0, "resets_at": limited_until})
    if not seen:
        return
    key = account(agent, machine)
    # Engines of several repositories write the one file: each adds its account's windows under a lock.
    with Flock(f"{_path(repo)}.lock"):
        data = load(repo)
        entry = data.setdefault(key, {"windows": {}})
        kept = {t: w for t, w in entry.get("windows", {}).items() if _live(w, now)}
        for w in seen:
            kept[str(w["type"])] = {"used_percent": float(w["used_percent"]), "resets_at": w.get("resets_at"),
                                    "seen_at": now}
        entry["windows"] = kept
        _save(repo, data)


def windows(repo: Repo, agent: str, machine: str, now: float | None = None) -> dict[str, dict[str, Any]]:
    """The account's windows whose reset has not passed yet."""
    now = time.time() if now is None else now
    entry = load(repo).get(account(agent, machine), {})
    return {t: w for t, w in (entry.get("windows") or {}).items() if _live(w, now)}


# -- the reserve ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Room:
    """How much of an account's plan is used: its fullest live window, and the one past the reserve."""

    used: float  # percent of the fullest window, 0 when none is known
    fullest: str | None  # that window's type
    past: dict[str, Any] | None  # the fullest window past the reserve, with its "type", or None
    words: str  # why it takes no new workers, or ""

    @property
    def open(self) -> bool:
        return self.past is None


def window_words(kind: str) -> str:
    """`5-hour`, `7-day`, or the name the agent gave."""
    return WINDOW_NAMES.get(kind, kind.replace("_", "-"))


def room(repo: Repo, agent: str, machine: str, reserve: int, now: float | None = None) -> Room:
    """The account's room under `reserve` percent kept for you."""
    if agent == "shell":
        return Room(0.0, None, None, "")
    live = windows(repo, agent, machine, now)
    if not live:
        return Room(0.0, None, None, "")
    extra = live.get(extra_usage.EXTRA)
    if extra is not None:  # whatever the reserve: a new worker would be paid beyond the plan
        return Room(100.0, extra_usage.EXTRA, {"type": extra_usage.EXTRA, **extra},
                    extra_usage.words(extra.get("resets_at")))
    kind, fullest = max(live.items(), key=lambda kv: (float(kv[1]["used_percent"]), kv[0]))
    used = float(fullest["used_percent"])
    if used < 100 - reserve:
        return Room(used, kind, None, "")
    return Room(used, kind, {"type": kind, **fullest}, past_words(kind, used, reserve, fullest.get("resets_at")))


def past_words(kind: str, used: float, reserve: int, resets_at: float | None) -> str:
    """`its plan's 5-hour window is 84% used, past the 20% you keep, resets 14:00`."""
    when = f", resets {clock(float(resets_at))}" if resets_at else ""
    if kind == "limit":
        return f"its plan's usage limit is reached{when}"
    if reserve == 0:
        return f"its plan's {window_words(kind)} window is {used:.0f}% used{when}"
    return f"its plan's {window_words(kind)} window is {used:.0f}% used, past the {reserve}% you keep{when}"


def refusal(repo: Repo, agent: str, machine: str, reserve: int) -> Room | None:
    """Why the account takes no new worker now, or None when it has room."""
    r = room(repo, agent, machine, reserve)
    return None if r.open else r


# -- choosing ------------------------------------------------------------------------------------------------

def _busy(s: Seat) -> tuple[float, int]:
    # The first two terms of placement's order: machines equal on them are equally busy.
    return ((s.load + 1) / max(s.weight, 1), s.load)


def choose_with_room(repo: Repo, seats: Sequence[Seat], *, agent: str, reserve: int,
                     explicit: str | None = None) -> Placement:
    """The placement rule (DESIGN §7), where among equally busy machines the account with more room wins.
    `seats` is left as it is."""
    if explicit or agent == "shell":
        return choose(seats, explicit=explicit, agent=agent)
    fit = [s for s in seats if able(s, agent)]
    if not fit:
        return choose(seats, agent=agent)
    least = min(_busy(s) for s in fit)
    tied = [s for s in fit if _busy(s) == least]
    rooms = {s.name: room(repo, agent, s.name, reserve) for s in tied}
    if len({(r.used, r.open) for r in rooms.values()}) < 2:
        return choose(seats, agent=agent)
    best = min(tied, key=lambda s: (not rooms[s.name].open, rooms[s.name].used))
    others = [s for s in tied if s.name != best.name]
    # Placement picks among the rest with the others left out.
    p = choose([s for s in seats if s.name not in {o.name for o in others}], agent=agent)
    r = rooms[best.name]
    theirs = ", ".join(f"{o.name} {rooms[o.name].used:.0f}%" for o in others)
    mine = f"{r.used:.0f}% of its plan's {window_words(r.fullest)} window used" if r.fullest else "no window used"
    return Placement(p.machine, f"{p.machine}: as busy as the others, and {agent_name(agent)} has more room "
                                f"there ({mine}; {theirs})")


def installed(repo: Repo, agent: str, machine: str) -> bool:
    """Whether the agent's CLI is there and signed in, as last asked (agents_probe.py); not asked yet: on this
    PATH for `local`, as `ready` found it elsewhere."""
    from git_balanced.machines.prepare.agents_probe import kept

    facts = (kept().get(machine, {}).get("agents") or {}).get(agent)
    if facts is not None:
        return bool(facts.get("installed") and facts.get("signed_in"))
    if machine == "local":
        return shutil.which(agent) is not None
    from git_balanced.machines.inventory.records import readiness

    return agent in (readiness(repo).get(machine, {}).get("agents") or [])


def other_agent(lead: Lead, settings: Settings, current: str, machine: str) -> tuple[str, str] | None:
    """Another agent with room on a ticked machine, for a piece whose agent must wait long: (agent, machine).

    The machine that ran the piece comes first: its branch and what the first agent did are there."""
    from git_balanced.machines.placing.seats import probed, seats

    names = [a for a in configured_agents(settings) if a != current]
    if not names:
        return None
    seen = probed(lead.repo, seats(lead))
    machines = [machine] + [s.name for s in sorted(seen, key=_busy) if able(s) and s.name != machine]
    for m in machines:
        for a in names:
            if installed(lead.repo, a, m) and refusal(lead.repo, a, m, settings.balanced.reserve) is None:
                return a, m
    return None
