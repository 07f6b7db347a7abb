"""The cron schedule parser and its next-time arithmetic, against hand-worked dates and robfig's
error messages."""

from __future__ import annotations

import datetime as dt

import pytest

from control.kinds.cron import CronError, parse, valid_zone


def at(text: str, zone: str = "UTC") -> float:
    from zoneinfo import ZoneInfo
    return dt.datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()


def iso(seconds: float | None, zone: str = "UTC") -> str | None:
    from zoneinfo import ZoneInfo
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


@pytest.mark.parametrize("spec, after, expected", [
    ("*/1 * * * *", "2026-01-01 10:00:30", "2026-01-01 10:01"),
    ("*/15 * * * *", "2026-01-01 10:00:00", "2026-01-01 10:15"),
    ("@hourly", "2026-01-01 10:59:59", "2026-01-01 11:00"),
    ("@daily", "2026-01-01 00:00:00", "2026-01-02 00:00"),
    ("@weekly", "2026-01-01 12:00:00", "2026-01-04 00:00"),          # 2026-01-04 is a Sunday
    ("@monthly", "2026-01-15 00:00:00", "2026-02-01 00:00"),
    ("@yearly", "2026-03-01 00:00:00", "2027-01-01 00:00"),
    ("30 9 * * MON-FRI", "2026-01-02 10:00:00", "2026-01-05 09:30"),  # Friday after 9:30 -> Monday
    ("0 0 13 * 5", "2026-01-01 00:00:00", "2026-01-02 00:00"),        # either the 13th or a Friday
    ("0 12 * JAN,MAR *", "2026-01-31 13:00:00", "2026-03-01 12:00"),
    ("5-10/5 1 * * *", "2026-01-01 01:05:00", "2026-01-01 01:10"),
])
def test_next_after(spec, after, expected):
    assert iso(parse(spec).next_after(at(after))) == expected


def test_an_impossible_date_has_no_next_time():
    assert parse("0 0 30 2 *").next_after(at("2026-01-01 00:00:00")) is None


def test_time_zones_shift_the_schedule():
    seoul = parse("0 9 * * *").next_after(at("2025-12-31 23:00:00"), "Asia/Seoul")  # 08:00 in Seoul
    assert iso(seoul, "Asia/Seoul") == "2026-01-01 09:00" and iso(seoul) == "2026-01-01 00:00"
    assert valid_zone("Asia/Seoul") and not valid_zone("Mars/Olympus") and not valid_zone("../etc")


@pytest.mark.parametrize("spec, message", [
    ("* * * *", "expected exactly 5 fields, found 4: * * * *"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("TZ=UTC * * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
])
def test_bad_schedules_are_refused_with_robfigs_words(spec, message):
    with pytest.raises(CronError) as caught:
        parse(spec)
    assert str(caught.value) == message
