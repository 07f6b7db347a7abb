"""The cron schedule a CronJob runs on: five fields or a `@` descriptor, read as kube-controller-
manager's parser (robfig/cron's ParseStandard) reads them, and the times it names.

Guarantees: `parse` either returns a `Schedule` or raises `CronError` with robfig's wording (the
text `spec.schedule: Invalid value` carries); fields are minute 0-59, hour 0-23, day of month 1-31,
month 1-12 or JAN-DEC, day of week 0-6 or SUN-SAT, each `*`/`?`, `a`, `a-b`, with `/step`, in comma
lists; `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`, `@hourly`. As in
robfig, when both day fields are restricted a day matching either runs. `next_after(t, zone)` is
the first whole minute strictly after `t` (epoch seconds) that the schedule names in `zone`, or
None when there is none within five years (e.g. February 30th).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                          "nov", "dec"))}
DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, MONTHS), (0, 6, DAYS))
HORIZON_DAYS = 5 * 366


class CronError(ValueError):
    """A schedule robfig/cron would refuse; the text is its error message."""


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool  # one of the day fields is `*`: both must match (else either may)

    def day_matches(self, day: dt.date) -> bool:
        dom, dow = day.day in self.days, (day.isoweekday() % 7) in self.weekdays
        return day.month in self.months and ((dom and dow) if self.any_day else (dom or dow))

    def next_after(self, moment: float, zone: str = "UTC") -> float | None:
        tz = ZoneInfo(zone)
        start = dt.datetime.fromtimestamp(moment, tz).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        day = start.date()
        for _ in range(HORIZON_DAYS):
            if self.day_matches(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        at = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
                        if at >= start and at.timestamp() > moment:
                            return at.timestamp()
            day += dt.timedelta(days=1)
        return None


def _number(text: str, names: dict[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text}: strconv.Atoi: parsing {text!r}: invalid syntax"
                        .replace("'", '"'))
    return int(text)


def _field(expr: str, low: int, high: int, names: dict[str, int]) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in expr.split(","):
        span, _, step_text = part.partition("/")
        step = _number(step_text, {}) if step_text else 1
        if span in ("*", "?"):
            start, end, star = low, high, star or step == 1
        else:
            first, dash, last = span.partition("-")
            start = _number(first, names)
            end = _number(last, names) if dash else (high if step_text else start)
        if start < low:
            raise CronError(f"beginning of range ({start}) below minimum ({low}): {part}")
        if end > high:
            raise CronError(f"end of range ({end}) above maximum ({high}): {part}")
        if start > end:
            raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
        if step == 0:
            raise CronError(f"step of range should be a positive number: {part}")
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def parse(spec: str) -> Schedule:
    text = spec.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise CronError("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    if text.startswith("@"):
        if text not in DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {text}")
        text = DESCRIPTORS[text]
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {spec}")
    parsed = [_field(expr, low, high, names) for expr, (low, high, names) in zip(fields, _BOUNDS)]
    (minutes, _), (hours, _), (days, dom_star), (months, _), (weekdays, dow_star) = parsed
    return Schedule(minutes, hours, days, months, weekdays, any_day=dom_star or dow_star)


def valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        return False
    return True
