"""The environment variables that shorten git balanced's waits (for tests and demos), each a number of seconds,
read one way: unset or empty is the default; anything but a number from the knob's floor to its ceiling (text,
nan, inf, a negative) is an error naming the variable and what to set, never a guess.

`cli.main` and the front door check them all (`check`) before the commands that read them (`READERS`: the engine
and what may run it, a headless lead's or chief's driver), so one of these never starts with a bad one only to
stop later (the engine pausing a worker, a headless lead between two looks); any other command, and `--help`, `-h`
or shell completion of any, does not look at them."""

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


# The commands that read a knob, or run what does (`lead start` and `chief start` their driver, detached, where a
# bad knob would stop it in its log only).
READERS = ("engine", "plan", "mcp", "lead run", "lead start", "chief run", "chief start")
HELP = frozenset({"-h", "--help"})


def reads(args: list[str]) -> bool:
    """Whether `git balanced ARGS` runs one of the READERS (not its help)."""
    named = " ".join(args[:2]) if args[:1] in (["lead"], ["chief"]) else " ".join(args[:1])
    options = args[:args.index("--")] if "--" in args else args
    return named in READERS and not HELP.intersection(options)


def check() -> None:
    """Each knob read once: the first one set wrong raises its error."""
    for knob in KNOBS:
        seconds(knob)
