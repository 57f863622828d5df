"""Cron schedules as upstream reads them: robfig/cron v3 ``ParseStandard`` and ``Next``.

Upstream's CronJob validation and controller parse ``spec.schedule`` with
``github.com/robfig/cron/v3`` (v3.0.1) ``ParseStandard``; the controller asks the parsed
schedule for ``Next(t)``. This module is kubeprio's own parser and calculator with the
same semantics and the same error texts, so a refused schedule reads as on a real
cluster (``spec.schedule: Invalid value: "*/0 * * * *": step of range should be a
positive number: */0``). A generic Python cron library was not used: their messages,
their day-of-month/day-of-week rule and their ``@every`` handling differ from robfig's.

What ``parse_standard`` accepts (robfig's ``Minute | Hour | Dom | Month | Dow |
Descriptor`` parser):

* an optional ``TZ=<zone> `` or ``CRON_TZ=<zone> `` prefix (the zone loaded from the tz
  database, as Go's ``time.LoadLocation``);
* a descriptor: ``@yearly``/``@annually``, ``@monthly``, ``@weekly``, ``@daily``/``@midnight``,
  ``@hourly``, or ``@every <Go duration>`` (a constant delay, rounded down to whole
  seconds, at least one second);
* otherwise exactly five whitespace-separated fields: minute (0-59), hour (0-23), day of
  month (1-31), month (1-12 or ``jan``-``dec``), day of week (0-6 or ``sun``-``sat``). A
  field is a comma-separated list of ``*`` or ``?``, ``N``, ``N-M``, each optionally
  ``/step``; ``N/step`` means ``N-max/step``. Names are case-insensitive.

Day rule (``dayMatches``): when the day-of-month or the day-of-week field is ``*`` (or
``?``), not stepped by more than 1, both must match (``0 0 * * 5`` is every Friday);
otherwise either may, as in classic cron (``0 0 13 * 5`` is every 13th *and* every
Friday; ``0 0 */10 * 6`` the 1st, 11th, 21st, 31st and every Saturday).

``Next`` walks month, day, hour, minute and second in the schedule's zone exactly as
robfig's ``SpecSchedule.Next`` does, including its daylight-saving corrections and the
five-year search limit (no match: ``None``, Go's zero time). Civil time arithmetic
follows Go's ``time.Date`` (a wall time in a gap is read with the offset *after* the
transition found from the offset before it; ``AddDate`` keeps the wall clock), and
``Truncate`` works on absolute time, as Go's does. A schedule without a ``TZ=`` prefix
uses Go's ``time.Local``, which in kubeprio is UTC (upstream: the controller manager's
zone, UTC in the usual container images).

Times are Unix seconds. Pure: no I/O beyond reading the tz database through ``zoneinfo``.
"""

from __future__ import annotations

import datetime
import functools
import math
import zoneinfo
from dataclasses import dataclass
from typing import Final

from kubeprio.api.gotext import go_quote

SECONDS_PER_DAY: Final = 86_400
STAR_BIT: Final = 1 << 63
"""Set when a field was ``*``/``?`` (robfig's ``starBit``): it decides the day rule."""
YEAR_SEARCH_LIMIT: Final = 5
"""``Next`` gives up after this many years without a match."""

_MONTH_NAMES: Final = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_DOW_NAMES: Final = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}


@dataclass(frozen=True, slots=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


SECONDS: Final = _Bounds(0, 59)
MINUTES: Final = _Bounds(0, 59)
HOURS: Final = _Bounds(0, 23)
DOM: Final = _Bounds(1, 31)
MONTHS: Final = _Bounds(1, 12, _MONTH_NAMES)
DOW: Final = _Bounds(0, 6, _DOW_NAMES)


class ScheduleError(ValueError):
    """A schedule robfig's parser refuses; ``str()`` is its error text."""


class UnknownTimeZoneError(ValueError):
    """``time.LoadLocation`` failed; ``str()`` is Go's error text."""


# --- Go's time package, the parts robfig uses ---------------------------------------------

_GO_SPACE: Final = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)
}
"""``unicode.IsSpace``: what ``strings.Fields`` splits on (not Python's ``\\x1c``-``\\x1f``)."""


def go_fields(text: str) -> list[str]:
    """``strings.Fields``: the runs of non-space characters."""
    fields: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _GO_SPACE:
            if current:
                fields.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        fields.append("".join(current))
    return fields


def go_list(values: list[str]) -> str:
    """``%s`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


@functools.lru_cache(maxsize=256)
def load_location(name: str) -> zoneinfo.ZoneInfo | None:
    """``time.LoadLocation``: None for UTC (``""`` and ``"UTC"``) and for ``Local``, which
    kubeprio runs in UTC; the zone otherwise, or ``UnknownTimeZoneError`` with Go's text."""
    if name in ("", "UTC", "Local"):
        return None
    if ".." in name or name[0] in "/\\":
        raise UnknownTimeZoneError("time: invalid location name")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        # Go reports a name it cannot find (or read as a zone) as unknown; the reading
        # error of a directory name (America) depends on the server's files.
        raise UnknownTimeZoneError(f"unknown time zone {name}") from None


def _offset(zone: zoneinfo.ZoneInfo | None, unix: int) -> int:
    """The zone's UTC offset in seconds at the instant ``unix``."""
    if zone is None:
        return 0
    moment = datetime.datetime.fromtimestamp(unix, zone)
    delta = moment.utcoffset()
    return 0 if delta is None else int(delta.total_seconds())


@dataclass(frozen=True, slots=True)
class Civil:
    """A time's wall clock in a zone (``t.Date()``, ``t.Clock()``, ``t.Weekday()``)."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    weekday: int
    """Sunday is 0, as Go's ``time.Weekday``."""


_EPOCH_ORDINAL: Final = datetime.date(1970, 1, 1).toordinal()


def civil(zone: zoneinfo.ZoneInfo | None, unix: int) -> Civil:
    """The wall clock of ``unix`` in ``zone``."""
    local = unix + _offset(zone, unix)
    days, second_of_day = divmod(local, SECONDS_PER_DAY)
    date = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
    return Civil(
        date.year,
        date.month,
        date.day,
        second_of_day // 3600,
        second_of_day // 60 % 60,
        second_of_day % 60,
        (date.weekday() + 1) % 7,
    )


def go_date(
    zone: zoneinfo.ZoneInfo | None,
    year: int,
    month: int,
    day: int,
    hour: int = 0,
    minute: int = 0,
    second: int = 0,
) -> int:
    """``time.Date``: fields out of range are normalised (month 13 is January next year,
    day 32 rolls over), then the wall time is turned into an instant with the offset Go
    picks: the one in force at the wall time read as UTC, corrected once if the instant
    that gives falls in another zone period (so a time in a spring-forward gap moves back
    by the gap, and an ambiguous autumn time takes the offset before the change)."""
    year, month0 = year + (month - 1) // 12, (month - 1) % 12
    days = datetime.date(year, month0 + 1, 1).toordinal() - _EPOCH_ORDINAL + day - 1
    unix = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second
    offset = _offset(zone, unix)
    if offset != 0:
        offset = _offset(zone, unix - offset)
    return unix - offset


def _add_date(zone: zoneinfo.ZoneInfo | None, unix: int, *, months: int = 0, days: int = 0) -> int:
    """``t.AddDate(0, months, days)``: the same wall clock on the new date."""
    c = civil(zone, unix)
    return go_date(zone, c.year, c.month + months, c.day + days, c.hour, c.minute, c.second)


_UNITS: Final = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 MICRO SIGN
    "μs": 1_000,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_LIMIT: Final = 1 << 63


def parse_go_duration(text: str) -> int:
    """``time.ParseDuration`` in nanoseconds, with Go's error texts."""
    invalid = ScheduleError(f"time: invalid duration {go_quote(text)}")
    rest = text
    negative = False
    if rest and rest[0] in "+-":
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise invalid
    total = 0
    while rest:
        if not (rest[0] == "." or (rest[0].isascii() and rest[0].isdigit())):
            raise invalid
        digits = _leading_digits(rest)
        whole = 0
        for char in digits:
            if whole > _DURATION_LIMIT // 10:
                raise invalid
            whole = whole * 10 + int(char)
            if whole > _DURATION_LIMIT:
                raise invalid
        rest = rest[len(digits) :]
        fraction, scale, has_fraction = 0, 1.0, False
        if rest.startswith("."):
            rest = rest[1:]
            fraction_digits = _leading_digits(rest)
            has_fraction = bool(fraction_digits)
            overflow = False
            for char in fraction_digits:
                if overflow:
                    continue
                if fraction > (_DURATION_LIMIT - 1) // 10:
                    overflow = True  # leadingFraction stops accumulating, keeps consuming
                    continue
                candidate = fraction * 10 + int(char)
                if candidate > _DURATION_LIMIT:
                    overflow = True
                    continue
                fraction, scale = candidate, scale * 10
            rest = rest[len(fraction_digits) :]
        if not digits and not has_fraction:
            raise invalid
        end = 0
        while end < len(rest) and not (
            rest[end] == "." or (rest[end].isascii() and rest[end].isdigit())
        ):
            end += 1
        if end == 0:
            raise ScheduleError(f"time: missing unit in duration {go_quote(text)}")
        unit_name, rest = rest[:end], rest[end:]
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise ScheduleError(
                f"time: unknown unit {go_quote(unit_name)} in duration {go_quote(text)}"
            )
        if whole > _DURATION_LIMIT // unit:
            raise invalid
        value = whole * unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _DURATION_LIMIT:
                raise invalid
        total += value
        if total > _DURATION_LIMIT:
            raise invalid
    if negative:
        return -total
    if total > _DURATION_LIMIT - 1:
        raise invalid
    return total


def _leading_digits(text: str) -> str:
    end = 0
    while end < len(text) and text[end].isascii() and text[end].isdigit():
        end += 1
    return text[:end]


def _atoi(text: str) -> int:
    """``strconv.Atoi`` with its error texts."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise ScheduleError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ScheduleError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return value


# --- schedules -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpecSchedule:
    """A crontab schedule as robfig's ``SpecSchedule``: one bit set per field."""

    second: int
    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    zone: zoneinfo.ZoneInfo | None = None
    """The ``TZ=`` zone; None is UTC (and Go's ``time.Local`` here)."""

    def next(self, after: float) -> int | None:
        """``SpecSchedule.Next``: the first matching second after ``after``, or None."""
        zone = self.zone
        # Start at the earliest possible time: the upcoming second.
        t = math.floor(after) + 1
        added = False
        year_limit = civil(zone, t).year + YEAR_SEARCH_LIMIT
        while True:  # WRAP
            c = civil(zone, t)
            if c.year > year_limit:
                return None
            wrapped = False
            while not (1 << c.month) & self.month:
                if not added:
                    added = True
                    t = go_date(zone, c.year, c.month, 1)
                t = _add_date(zone, t, months=1)
                c = civil(zone, t)
                if c.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(c):
                if not added:
                    added = True
                    t = go_date(zone, c.year, c.month, c.day)
                t = _add_date(zone, t, days=1)
                c = civil(zone, t)
                # Daylight saving moved midnight: back to 0 h (or on to the next 0 h).
                if c.hour != 0:
                    t += (24 - c.hour) * 3600 if c.hour > 12 else -c.hour * 3600
                    c = civil(zone, t)
                if c.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << c.hour) & self.hour:
                if not added:
                    added = True
                    t = go_date(zone, c.year, c.month, c.day, c.hour)
                t += 3600
                c = civil(zone, t)
                if c.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << c.minute) & self.minute:
                if not added:
                    added = True
                    t -= t % 60  # Truncate(time.Minute): absolute time, not wall time
                t += 60
                c = civil(zone, t)
                if c.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << c.second) & self.second:
                added = True
                t += 1
                c = civil(zone, t)
                if c.second == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return t

    def _day_matches(self, c: Civil) -> bool:
        """``dayMatches``: both day fields with a ``*`` in either, else one of them."""
        dom_match = bool((1 << c.day) & self.dom)
        dow_match = bool((1 << c.weekday) & self.dow)
        if self.dom & STAR_BIT or self.dow & STAR_BIT:
            return dom_match and dow_match
        return dom_match or dow_match


@dataclass(frozen=True, slots=True)
class ConstantDelaySchedule:
    """``@every``: robfig's ``ConstantDelaySchedule`` (whole seconds, at least one)."""

    delay: int

    def next(self, after: float) -> int:
        """``Next``: ``after`` (its fraction of a second dropped) plus the delay."""
        return math.floor(after) + self.delay


Schedule = SpecSchedule | ConstantDelaySchedule


def every(nanoseconds: int) -> ConstantDelaySchedule:
    """``cron.Every``: at least one second, rounded down to whole seconds (towards zero)."""
    if nanoseconds < 1_000_000_000:
        nanoseconds = 1_000_000_000
    return ConstantDelaySchedule(nanoseconds // 1_000_000_000)


def _bits(low: int, high: int, step: int) -> int:
    return sum(1 << i for i in range(low, high + 1, step))


def _all(bounds: _Bounds) -> int:
    return _bits(bounds.low, bounds.high, 1) | STAR_BIT


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names is not None:
        named = names.get(text.lower())
        if named is not None:
            return named
    return _must_parse_int(text)


def _must_parse_int(text: str) -> int:
    try:
        number = _atoi(text)
    except ScheduleError as exc:
        raise ScheduleError(f"failed to parse int from {text}: {exc}") from None
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {text}")
    return number


def _range(expr: str, bounds: _Bounds) -> int:
    """``getRange``: ``*``, ``N`` or ``N-M``, optionally ``/step``."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds.names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, bounds: _Bounds) -> int:
    """``getField``: the union of the comma-separated ranges (empty parts skipped)."""
    bits = 0
    for expr in (part for part in text.split(",") if part):
        bits |= _range(expr, bounds)
    return bits


def _descriptor(text: str, zone: zoneinfo.ZoneInfo | None) -> Schedule:
    """``parseDescriptor``."""
    first_day = 1 << DOM.low
    if text in ("@yearly", "@annually"):
        return SpecSchedule(1, 1, 1, first_day, 1 << MONTHS.low, _all(DOW), zone)
    if text == "@monthly":
        return SpecSchedule(1, 1, 1, first_day, _all(MONTHS), _all(DOW), zone)
    if text == "@weekly":
        return SpecSchedule(1, 1, 1, _all(DOM), _all(MONTHS), 1 << DOW.low, zone)
    if text in ("@daily", "@midnight"):
        return SpecSchedule(1, 1, 1, _all(DOM), _all(MONTHS), _all(DOW), zone)
    if text == "@hourly":
        return SpecSchedule(1, 1, _all(HOURS), _all(DOM), _all(MONTHS), _all(DOW), zone)
    prefix = "@every "
    if text.startswith(prefix):
        try:
            nanoseconds = parse_go_duration(text[len(prefix) :])
        except ScheduleError as exc:
            raise ScheduleError(f"failed to parse duration {text}: {exc}") from None
        return every(nanoseconds)
    raise ScheduleError(f"unrecognized descriptor: {text}")


def parse_standard(spec: str) -> Schedule:
    """``cron.ParseStandard``: the schedule, or ``ScheduleError`` with robfig's text."""
    if not spec:
        raise ScheduleError("empty spec string")
    zone: zoneinfo.ZoneInfo | None = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        equals = spec.find("=")
        # Go slices spec[eq+1:i]; without a space i is -1 and the slice panics there
        # (upstream answers 500 for such a schedule); kubeprio reads the zone to the end.
        name = spec[equals + 1 : space] if space >= 0 else spec[equals + 1 :]
        try:
            zone = load_location(name)
        except UnknownTimeZoneError as exc:
            raise ScheduleError(f"provided bad location {name}: {exc}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _descriptor(spec, zone)
    fields = go_fields(spec)
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {go_list(fields)}")
    minute = _field(fields[0], MINUTES)
    hour = _field(fields[1], HOURS)
    dom = _field(fields[2], DOM)
    month = _field(fields[3], MONTHS)
    dow = _field(fields[4], DOW)
    # The seconds field is not part of the standard format: always 0.
    return SpecSchedule(1 << SECONDS.low, minute, hour, dom, month, dow, zone)
