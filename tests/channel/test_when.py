"""WHEN specs: parsing, refusals that show the forms, and due times across daylight saving."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from git_balanced.channel.when import When, due_now, local_zone, next_due, parse_when, validate_future
from git_balanced.errors import BalancedError

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"
EXAMPLES = ("daily 09:00", "weekdays 18:30", "every 30 minutes", "every 2 hours", "once 2026-11-12 09:00")


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> ZoneInfo:
    monkeypatch.setenv("TZ", BERLIN)
    return ZoneInfo(BERLIN)


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> ZoneInfo:
    monkeypatch.setenv("TZ", NEW_YORK)
    return ZoneInfo(NEW_YORK)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def walk(when: When, start: datetime, end: datetime, anchor: datetime | None = None) -> list[datetime]:
    """Every due moment in (start, end], in UTC, by calling next_due the way an engine would."""
    seen: list[datetime] = []
    moment = next_due(when, start, anchor=anchor)
    while moment is not None and moment <= end:
        assert len(seen) < 1000 and (not seen or moment.astimezone(UTC) > seen[-1]), "next_due moves on"
        seen.append(moment.astimezone(UTC))
        moment = next_due(when, moment, anchor=anchor)
    return seen


# parsing


@pytest.mark.parametrize(
    ("spec", "kind", "text"),
    [
        ("daily 09:00", "daily", "daily 09:00"),
        ("  Daily    9:05 ", "daily", "daily 09:05"),
        ("WEEKDAYS 07:00", "weekdays", "weekdays 07:00"),
        ("every 30 minutes", "every", "every 30 minutes"),
        ("Every  05   MINUTES", "every", "every 5 minutes"),
        ("every 1 hour", "every", "every 1 hour"),
        ("every 2 Hours", "every", "every 2 hours"),
        ("once 2026-11-12 09:00", "once", "once 2026-11-12 09:00"),
        ("ONCE 2026-3-9 7:30", "once", "once 2026-03-09 07:30"),
    ],
)
def test_parse_normalises(spec: str, kind: str, text: str) -> None:
    when = parse_when(spec)
    assert (when.kind, when.text, str(when)) == (kind, text, text)
    assert parse_when(when.text) == when, "the normalised text parses back to the same schedule"


def test_every_periods() -> None:
    assert parse_when("every 5 minutes").period == timedelta(minutes=5), "five minutes is the floor, allowed"
    assert parse_when("every 2 hours").period == timedelta(hours=2)
    assert parse_when("every 90 minutes").period == timedelta(minutes=90)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("daily 25:00", "hour"),
        ("daily 09:60", "minutes"),
        ("weekdays 9am", "HH:MM"),
        ("daily", "one time"),
        ("daily 09:00 10:00", "one time"),
        ("once 2026-02-30 09:00", "2026-02-30 is not a day"),
        ("once 2026-11-12", "a date and a time"),
        ("once tomorrow 09:00", "a date and a time"),
        ("every 0 hours", "1 or more"),
        ("every 4 minutes", "5 minutes at the least"),
        ("every 1 minute", "5 minutes at the least"),
        ("every 2 days", "minutes or hours"),
        ("every -5 minutes", "whole number"),
        ("every 9000 hours", "more than a year"),
        ("fortnightly", "none of daily, weekdays, every, once"),
        ("   ", "write one of the forms"),
    ],
)
def test_bad_specs_show_the_forms(spec: str, why: str) -> None:
    with pytest.raises(BalancedError) as caught:
        parse_when(spec)
    message = caught.value.message
    if spec.strip():
        assert f"`{spec.strip()}`" in message, "the message names the spec as typed"
    assert why in message, f"the reason is given: {message}"
    for example in EXAMPLES:
        assert example in message, f"every accepted form is shown with an example: {example}"
    assert caught.value.hint and "git balanced schedule add" in caught.value.hint


def test_once_in_the_past_is_refused(berlin: ZoneInfo) -> None:
    now = datetime(2026, 6, 1, 12, 0, tzinfo=berlin)
    when = parse_when("once 2026-06-01 11:59")
    with pytest.raises(BalancedError) as caught:
        validate_future(when, now)
    assert "`once 2026-06-01 11:59` is in the past" in caught.value.message
    assert "2026-06-01 12:00" in caught.value.message, "the message says what time it is here"
    with pytest.raises(BalancedError):
        parse_when("once 2026-06-01 12:00", now=now)  # not strictly after now: never fires
    assert parse_when("once 2026-06-01 12:01", now=now).kind == "once"
    validate_future(parse_when("daily 08:00"), now)  # recurring kinds always come again


def test_naive_datetimes_are_refused(berlin: ZoneInfo) -> None:
    with pytest.raises(ValueError, match="aware"):
        next_due(parse_when("daily 09:00"), datetime(2026, 6, 1, 8, 0))


def test_every_needs_its_anchor(berlin: ZoneInfo) -> None:
    with pytest.raises(ValueError, match="anchor"):
        next_due(parse_when("every 2 hours"), datetime(2026, 6, 1, 8, 0, tzinfo=berlin))


# the local zone


def test_local_zone_follows_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", NEW_YORK)
    assert str(local_zone()) == NEW_YORK
    monkeypatch.setenv("TZ", f":{BERLIN}")
    assert str(local_zone()) == BERLIN, "a leading colon, as libc allows, is tolerated"
    summer = utc(2026, 7, 1, 12, 0)
    assert summer.astimezone(local_zone()).utcoffset() == timedelta(hours=2)


def test_local_zone_without_tz_is_the_system_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    zone = local_zone()
    assert utc(2026, 1, 1).astimezone(zone).utcoffset() is not None
    with open("/etc/localtime", "rb") as f:
        system = ZoneInfo.from_file(f)
    moment = utc(2026, 7, 1, 12)
    assert moment.astimezone(zone).utcoffset() == moment.astimezone(system).utcoffset()


# next_due


def test_daily_is_strictly_after(berlin: ZoneInfo) -> None:
    when = parse_when("daily 09:00")
    today = datetime(2026, 6, 1, 9, 0, tzinfo=berlin)
    assert next_due(when, today - timedelta(seconds=1)) == today
    assert next_due(when, today) == today + timedelta(days=1), "a slot equal to `after` is not after it"
    result = next_due(when, today)
    assert result is not None and result.tzinfo is not None and str(result.tzinfo) == BERLIN


def test_daily_spring_forward_gap_fires_once_at_first_valid_instant(berlin: ZoneInfo) -> None:
    # 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that night.
    when = parse_when("daily 02:30")
    fired = walk(when, utc(2026, 3, 27, 12), utc(2026, 3, 31, 12))
    assert fired == [
        utc(2026, 3, 28, 1, 30),  # 02:30 CET
        utc(2026, 3, 29, 1, 0),  # 03:00 CEST, the first instant after the gap
        utc(2026, 3, 30, 0, 30),  # 02:30 CEST
        utc(2026, 3, 31, 0, 30),
    ]
    shown = fired[1].astimezone(berlin)
    assert (shown.hour, shown.minute, shown.utcoffset()) == (3, 0, timedelta(hours=2))


def test_daily_fall_back_fold_fires_once(berlin: ZoneInfo) -> None:
    # 2026-10-25 in Berlin: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice.
    when = parse_when("daily 02:30")
    fired = walk(when, utc(2026, 10, 24, 12), utc(2026, 10, 26, 12))
    assert fired == [utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)], "the first 02:30 only, then Monday"
    second_half_thirty = utc(2026, 10, 25, 1, 30)  # 02:30 CET, the repeat
    assert due_now(when, last_fired=fired[0], added=utc(2026, 10, 1), now=second_half_thirty) is None


def test_new_york_gap_and_fold(new_york: ZoneInfo) -> None:
    # 2026-03-08: 02:00 EST jumps to 03:00 EDT. 2026-11-01: 02:00 EDT falls back to 01:00 EST.
    gap = walk(parse_when("daily 02:30"), utc(2026, 3, 7, 12), utc(2026, 3, 8, 23))
    assert gap == [utc(2026, 3, 8, 7, 0)], "03:00 EDT, once"
    fold = walk(parse_when("daily 01:30"), utc(2026, 10, 31, 12), utc(2026, 11, 1, 23))
    assert fold == [utc(2026, 11, 1, 5, 30)], "01:30 EDT, the first of the two"


def test_once_in_a_gap_resolves_to_the_end_of_the_gap(berlin: ZoneInfo) -> None:
    when = parse_when("once 2026-03-29 02:15")
    assert next_due(when, utc(2026, 3, 1)) == utc(2026, 3, 29, 1, 0)


def test_weekdays_skip_the_weekend(new_york: ZoneInfo) -> None:
    when = parse_when("weekdays 07:00")
    friday_late = datetime(2026, 11, 6, 8, 0, tzinfo=new_york)
    monday = next_due(when, friday_late)
    assert monday is not None and (monday.strftime("%a %d"), monday.hour) == ("Mon 09", 7)
    saturday = datetime(2026, 11, 7, 6, 0, tzinfo=new_york)
    assert next_due(when, saturday) == monday
    # Two weeks that cross the fall-back night: ten mornings, all at 07:00 on the wall clock.
    fired = walk(when, datetime(2026, 10, 25, 0, 0, tzinfo=new_york), datetime(2026, 11, 8, tzinfo=new_york))
    local = [f.astimezone(new_york) for f in fired]
    assert len(local) == 10
    assert {m.strftime("%a") for m in local} == {"Mon", "Tue", "Wed", "Thu", "Fri"}
    assert {(m.hour, m.minute) for m in local} == {(7, 0)}


def test_every_counts_from_the_anchor(berlin: ZoneInfo) -> None:
    when = parse_when("every 2 hours")
    added = datetime(2026, 6, 1, 10, 7, tzinfo=berlin)
    assert next_due(when, added, anchor=added) == added + timedelta(hours=2), "one period after adding"
    assert next_due(when, added - timedelta(days=1), anchor=added) == added + timedelta(hours=2)
    one_pm = datetime(2026, 6, 1, 13, 0, tzinfo=berlin)
    assert next_due(when, one_pm, anchor=added) == added + timedelta(hours=4)
    on_slot = added + timedelta(hours=4)
    assert next_due(when, on_slot, anchor=added) == added + timedelta(hours=6), "strictly after"
    five = parse_when("every 5 minutes")
    assert len(walk(five, added, added + timedelta(hours=1), anchor=added)) == 12


def test_every_is_elapsed_time_across_spring_forward(berlin: ZoneInfo) -> None:
    when = parse_when("every 2 hours")
    added = datetime(2026, 3, 29, 0, 0, tzinfo=berlin)  # 23:00 UTC the day before
    fired = walk(when, added, utc(2026, 3, 29, 5), anchor=added)
    assert fired == [utc(2026, 3, 29, 1), utc(2026, 3, 29, 3), utc(2026, 3, 29, 5)]
    assert fired[0].astimezone(berlin).hour == 3, "two real hours after midnight is 03:00 CEST that night"


def test_once_is_none_when_past(berlin: ZoneInfo) -> None:
    when = parse_when("once 2026-11-12 09:00")
    moment = datetime(2026, 11, 12, 9, 0, tzinfo=berlin)
    assert next_due(when, moment - timedelta(minutes=1)) == moment
    assert next_due(when, moment) is None


# due_now


def test_missed_daily_slots_fire_once(berlin: ZoneInfo) -> None:
    when = parse_when("daily 09:00")
    added = datetime(2026, 6, 1, 8, 0, tzinfo=berlin)
    back = datetime(2026, 6, 4, 12, 0, tzinfo=berlin)  # the engine was down Monday to Thursday noon
    slot = due_now(when, last_fired=None, added=added, now=back)
    assert slot == datetime(2026, 6, 4, 9, 0, tzinfo=berlin), "the latest missed slot, once"
    assert due_now(when, last_fired=slot, added=added, now=back + timedelta(seconds=30)) is None
    assert due_now(when, last_fired=slot, added=added, now=datetime(2026, 6, 5, 8, 59, tzinfo=berlin)) is None
    friday = datetime(2026, 6, 5, 9, 0, 20, tzinfo=berlin)
    assert due_now(when, last_fired=slot, added=added, now=friday) == friday.replace(second=0)


def test_nothing_due_before_the_first_slot(berlin: ZoneInfo) -> None:
    when = parse_when("daily 09:00")
    added = datetime(2026, 6, 1, 9, 30, tzinfo=berlin)  # added after today's slot: it is not owed
    assert due_now(when, last_fired=None, added=added, now=added + timedelta(hours=5)) is None
    tomorrow = datetime(2026, 6, 2, 9, 0, tzinfo=berlin)
    assert due_now(when, last_fired=None, added=added, now=tomorrow) == tomorrow, "due at the slot itself"


def test_missed_weekday_slots_over_a_weekend(berlin: ZoneInfo) -> None:
    when = parse_when("weekdays 07:00")
    added = datetime(2026, 6, 1, 6, 0, tzinfo=berlin)  # a Monday
    friday = datetime(2026, 6, 5, 7, 0, tzinfo=berlin)
    sunday = datetime(2026, 6, 7, 23, 0, tzinfo=berlin)
    assert due_now(when, last_fired=None, added=added, now=sunday) == friday
    assert due_now(when, last_fired=friday, added=added, now=sunday) is None, "nothing on the weekend"


def test_missed_every_slots_fire_once(berlin: ZoneInfo) -> None:
    when = parse_when("every 5 minutes")
    added = datetime(2026, 6, 1, 10, 0, tzinfo=berlin)
    assert due_now(when, last_fired=None, added=added, now=added + timedelta(minutes=4)) is None
    back = added + timedelta(hours=3, minutes=2)
    slot = due_now(when, last_fired=None, added=added, now=back)
    assert slot == added + timedelta(hours=3), "36 slots missed, one fires: the latest"
    assert due_now(when, last_fired=slot, added=added, now=back) is None
    assert due_now(when, last_fired=slot, added=added, now=slot + timedelta(minutes=5)) == slot + timedelta(
        minutes=5
    )


def test_once_fires_then_is_done(berlin: ZoneInfo) -> None:
    when = parse_when("once 2026-11-12 09:00")
    added = datetime(2026, 11, 1, 12, 0, tzinfo=berlin)
    moment = datetime(2026, 11, 12, 9, 0, tzinfo=berlin)
    assert due_now(when, last_fired=None, added=added, now=moment - timedelta(seconds=1)) is None
    assert due_now(when, last_fired=None, added=added, now=moment + timedelta(days=2)) == moment
    assert due_now(when, last_fired=moment, added=added, now=moment + timedelta(days=3)) is None


def test_once_stays_done_when_the_zone_changes(monkeypatch: pytest.MonkeyPatch, berlin: ZoneInfo) -> None:
    # The lead's machine moves west after the schedule fired: 09:00 there is six hours later, yet done.
    when = parse_when("once 2026-11-12 09:00")
    added = datetime(2026, 11, 1, 12, 0, tzinfo=berlin)
    fired = due_now(when, last_fired=None, added=added, now=datetime(2026, 11, 12, 9, 0, 10, tzinfo=berlin))
    assert fired is not None
    monkeypatch.setenv("TZ", NEW_YORK)
    later = datetime(2026, 11, 12, 9, 0, 10, tzinfo=ZoneInfo(NEW_YORK))
    assert due_now(when, last_fired=fired, added=added, now=later) is None


def test_daily_in_the_fold_fires_once_through_due_now(berlin: ZoneInfo) -> None:
    # An engine polling every 15 seconds through the whole fall-back night hears 02:30 once.
    when = parse_when("daily 02:30")
    added = utc(2026, 10, 24, 12)
    last: datetime | None = None
    fired = []
    now = utc(2026, 10, 24, 23, 0)
    while now < utc(2026, 10, 25, 3, 0):
        slot = due_now(when, last_fired=last, added=added, now=now)
        if slot is not None:
            fired.append(slot.astimezone(UTC))
            last = slot
        now += timedelta(seconds=15)
    assert fired == [utc(2026, 10, 25, 0, 30)]
