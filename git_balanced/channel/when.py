"""WHEN specs of schedules (`daily 09:00`, `every 30 minutes`, ...) and when they are due.

All arithmetic is done in UTC: Python compares and subtracts two datetimes of the same zone by their
wall clocks, ignoring `fold`, which would make the repeated hour of a fall-back night look like one.
Results are handed back in the lead machine's local zone.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from git_balanced.errors import BalancedError

KINDS = ("daily", "weekdays", "every", "once")
SHORTEST = timedelta(minutes=5)
LONGEST = timedelta(days=366)
FORMS = (
    "  daily HH:MM             e.g. daily 09:00\n"
    "  weekdays HH:MM          e.g. weekdays 18:30   (Monday to Friday)\n"
    "  every N minutes         e.g. every 30 minutes (5 at the least)\n"
    "  every N hours           e.g. every 2 hours\n"
    "  once YYYY-MM-DD HH:MM   e.g. once 2026-11-12 09:00"
)
HINT = 'git balanced schedule add "weekdays 07:00" "Sum up what landed yesterday"'
_TIME = re.compile(r"(\d{1,2}):(\d{2})")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_UNITS = {"minute": 1, "minutes": 1, "hour": 60, "hours": 60}


@dataclass(frozen=True)
class When:
    """A parsed schedule spec; `text` is its normalised form, e.g. `weekdays 07:00`."""

    kind: str  # daily | weekdays | every | once
    text: str
    at: time | None = None  # daily, weekdays, once: the wall-clock time
    day: date | None = None  # once: the date
    period: timedelta | None = None  # every: the interval

    def __str__(self) -> str:
        return self.text


def local_zone() -> tzinfo:
    """The lead machine's zone: the TZ variable when it names a zone, else /etc/localtime, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    try:
        if name.startswith("/"):
            with open(name, "rb") as f:
                return ZoneInfo.from_file(f, key=name)
        if name:
            return ZoneInfo(name)
    except (OSError, ValueError, ZoneInfoNotFoundError):
        pass  # a POSIX rule string such as "CET-1CEST,M3.5.0,M10.5.0/3": the system zone is the best guess
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return UTC


def _bad(spec: str, reason: str) -> BalancedError:
    shown = f"`{spec.strip()}`" if spec.strip() else "An empty WHEN"
    return BalancedError(
        f"{shown} is not a schedule: {reason}.\n"
        f"A WHEN is one of these, in this machine's local time:\n{FORMS}",
        hint=HINT,
    )


def _clock(spec: str, word: str) -> time:
    m = _TIME.fullmatch(word)
    if not m:
        raise _bad(spec, f"`{word}` is not a time written HH:MM, such as 09:00")
    hour, minute = int(m[1]), int(m[2])
    if hour > 23:
        raise _bad(spec, f"the hour of `{word}` must be 00 to 23")
    if minute > 59:
        raise _bad(spec, f"the minutes of `{word}` must be 00 to 59")
    return time(hour, minute)


def parse_when(spec: str, *, now: datetime | None = None) -> When:
    """Parse a WHEN spec (case-insensitive, spaces free); with `now`, a `once` in the past is refused too."""
    words = spec.lower().split()
    head = words[0] if words else ""
    if head not in KINDS:
        reason = "it starts with none of daily, weekdays, every, once" if head else "write one of the forms"
        raise _bad(spec, reason)
    if head in ("daily", "weekdays"):
        if len(words) != 2:
            raise _bad(spec, f"{head} takes one time, such as `{head} 09:00`")
        at = _clock(spec, words[1])
        when = When(head, f"{head} {at:%H:%M}", at=at)
    elif head == "every":
        if len(words) != 3 or not words[1].isdigit() or words[2] not in _UNITS:
            raise _bad(spec, "every takes a whole number and minutes or hours, such as `every 30 minutes`")
        count, unit = int(words[1]), words[2].rstrip("s")
        period = timedelta(minutes=count * _UNITS[words[2]])
        if count == 0:
            raise _bad(spec, "N must be 1 or more")
        if period < SHORTEST:
            raise _bad(spec, "schedules run every 5 minutes at the least")
        if period > LONGEST:
            raise _bad(spec, "that is more than a year; use `once YYYY-MM-DD HH:MM` instead")
        when = When("every", f"every {count} {unit}{'' if count == 1 else 's'}", period=period)
    else:
        if len(words) != 3 or not _DATE.fullmatch(words[1]):
            raise _bad(spec, "once takes a date and a time, such as `once 2026-11-12 09:00`")
        y, mo, d = (int(g) for g in _DATE.fullmatch(words[1]).groups())  # type: ignore[union-attr]
        try:
            day = date(y, mo, d)
        except ValueError:
            raise _bad(spec, f"{words[1]} is not a day of the calendar") from None
        at = _clock(spec, words[2])
        when = When("once", f"once {day.isoformat()} {at:%H:%M}", at=at, day=day)
    if now is not None:
        validate_future(when, now)
    return when


def validate_future(when: When, now: datetime) -> None:
    """Refuse a `once` schedule whose moment is not after `now`; other kinds always come again."""
    if when.kind != "once":
        return
    zone = local_zone()
    slot = _resolve(when.day, when.at, zone)  # type: ignore[arg-type]
    if slot <= _utc(now, "now"):
        shown = _utc(now, "now").astimezone(zone)
        raise BalancedError(
            f"`{when.text}` is in the past: it is {shown:%Y-%m-%d %H:%M} now here ({zone}).",
            hint='pick a later moment, e.g. git balanced schedule add "once YYYY-MM-DD HH:MM" TEXT',
        )


def _utc(moment: datetime, name: str) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, got {moment!r}")
    return moment.astimezone(UTC)


def _resolve(day: date, at: time, zone: tzinfo) -> datetime:
    """The UTC instant of wall time `at` on `day`: the first of two in a fall-back fold, and the first
    instant that exists (the end of the gap) when spring-forward skips it."""
    wall = datetime.combine(day, at)
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) == wall:
        return first
    # In a gap, fold=1 reads the wall with the offset after the change, landing before the transition,
    # and fold=0 with the offset before it, landing after: the transition lies between the two.
    before = int(wall.replace(tzinfo=zone, fold=1).astimezone(UTC).timestamp())
    after = int(first.timestamp())
    offset_after = first.astimezone(zone).utcoffset()
    while after - before > 1:
        mid = (before + after) // 2
        if datetime.fromtimestamp(mid, UTC).astimezone(zone).utcoffset() == offset_after:
            after = mid
        else:
            before = mid
    return datetime.fromtimestamp(after, UTC)


def _day_slots(when: When, around: datetime, zone: tzinfo, days: range) -> list[datetime]:
    """The UTC slots of a daily/weekdays/once schedule on the local days `around` + each of `days`."""
    if when.kind == "once":
        return [_resolve(when.day, when.at, zone)]  # type: ignore[arg-type]
    start = around.astimezone(zone).date()
    picked = (start + timedelta(days=n) for n in days)
    return [
        _resolve(d, when.at, zone)  # type: ignore[arg-type]
        for d in picked
        if when.kind == "daily" or d.weekday() < 5
    ]


def _anchor(when: When, anchor: datetime | None) -> tuple[datetime, timedelta]:
    if anchor is None or when.period is None:
        raise ValueError(f"`{when.text}` counts from when it was added: pass anchor=")
    return _utc(anchor, "anchor"), when.period


def next_due(when: When, after: datetime, *, anchor: datetime | None = None) -> datetime | None:
    """The first due moment strictly after `after`, in local time; None once a `once` has passed."""
    zone, after_utc = local_zone(), _utc(after, "after")
    if when.kind == "every":
        start, period = _anchor(when, anchor)
        steps = max(1, (after_utc - start) // period + 1)  # the first slot is one period after adding
        return (start + steps * period).astimezone(zone)
    # A day earlier too, in case a gap pushes yesterday's slot past midnight; weekdays need up to 3 days on.
    later = [s for s in _day_slots(when, after_utc, zone, range(-1, 9)) if s > after_utc]
    return min(later).astimezone(zone) if later else None


def _last_slot(when: When, now: datetime, added: datetime, zone: tzinfo) -> datetime | None:
    """The latest UTC slot at or before `now`, or None."""
    if when.kind == "every":
        start, period = _anchor(when, added)
        steps = (now - start) // period
        return start + steps * period if steps >= 1 else None
    passed = [s for s in _day_slots(when, now, zone, range(-8, 2)) if s <= now]
    return max(passed) if passed else None


def due_now(when: When, *, last_fired: datetime | None, added: datetime, now: datetime) -> datetime | None:
    """The slot to fire now, in local time: the latest one missed, never one per missed slot; else None."""
    if when.kind == "once" and last_fired is not None:
        return None  # a `once` is done after it fires
    zone, now_utc, added_utc = local_zone(), _utc(now, "now"), _utc(added, "added")
    slot = _last_slot(when, now_utc, added_utc, zone)
    if slot is None or slot <= added_utc:
        return None
    if last_fired is not None and slot <= _utc(last_fired, "last_fired"):
        return None
    return slot.astimezone(zone)
