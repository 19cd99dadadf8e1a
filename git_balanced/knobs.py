"""The environment variables that shorten git balanced's waits (for tests and demos), each a number of seconds,
read one way: unset or empty is the default; anything but a number from the knob's floor to its ceiling (text,
nan, inf, a negative) is an error naming the variable and what to set, never a guess.

`cli.main` checks them all before a command runs (`check`), and the front door before `plan`, `engine` and `mcp`,
so a command that would read one later (the engine pausing a worker, a headless lead between two looks) never
starts with a bad one."""

from __future__ import annotations

import os

from git_balanced.errors import BalancedError

HOUR = 3600.0
DAY = 24 * HOUR


class Knob:
    """One variable: its name, the seconds it stands for when unset, the least and the most it may say, and
    what it sets (for the message when it is wrong). A plain class: the front door's commands check the knobs
    without importing dataclasses."""

    __slots__ = ("name", "default", "floor", "ceiling", "what")

    def __init__(self, name: str, default: float, floor: float, ceiling: float, what: str) -> None:
        self.name, self.default, self.floor, self.ceiling, self.what = name, default, floor, ceiling, what


LEAD_POLL = Knob("GIT_BALANCED_LEAD_POLL", 1.0, 0.1, HOUR, "the seconds between a headless lead's looks at its inbox")
CHIEF_LOOK = Knob("GIT_BALANCED_CHIEF_LOOK", 5.0, 0.1, HOUR, "the seconds between the chief's looks over its projects")
RESUME_MARGIN = Knob("GIT_BALANCED_RESUME_MARGIN", 60.0, 0.0, DAY,
                     "the seconds a worker paused for a usage limit waits after the limit resets")
UNKNOWN_RESET = Knob("GIT_BALANCED_UNKNOWN_RESET", HOUR, 0.0, 7 * DAY,
                     "the seconds a worker waits when its agent does not say when its usage limit resets")
KNOBS = (LEAD_POLL, CHIEF_LOOK, RESUME_MARGIN, UNKNOWN_RESET)


def seconds(knob: Knob) -> float:
    """What the knob's variable says, in seconds, or its default when unset or empty; a BalancedError naming it
    when it says anything else than a number from its floor to its ceiling."""
    raw = os.environ.get(knob.name, "").strip()
    if not raw:
        return knob.default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not knob.floor <= value <= knob.ceiling:  # nan compares false, inf is over any ceiling
        raise BalancedError(f"{knob.name}={raw!r} is not a number of seconds from {knob.floor:g} to "
                            f"{knob.ceiling:g} ({knob.what}).",
                            hint=f"set it to one, such as {knob.name}={knob.default:g}, or unset it for the "
                                 f"default ({knob.default:g}).")
    return value


def check() -> None:
    """Each knob read once: the first one set wrong raises its error."""
    for knob in KNOBS:
        seconds(knob)
