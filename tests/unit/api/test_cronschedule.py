"""Cron schedules as robfig/cron v3.0.1 reads them (``ParseStandard``, ``Next``).

The rules and texts are robfig's ``parser.go`` (``Parse``, ``normalizeFields``,
``getField``, ``getRange``, ``mustParseInt``, ``parseDescriptor``), ``spec.go``
(``SpecSchedule.Next``, ``dayMatches``) and ``constantdelay.go`` (``Every``), with Go's
``strconv.Atoi``, ``time.ParseDuration`` and ``time.LoadLocation`` errors inside them.
Case names follow robfig's ``parser_test.go``/``spec_test.go`` where they match.
"""

from __future__ import annotations

import datetime

import pytest

from kubeprio.api import cronschedule as cs

UTC = datetime.UTC


def at(text: str, zone: str | None = None) -> float:
    """A wall time (``2024-03-10 01:59:00``) in ``zone`` (UTC by default) as Unix seconds."""
    tz = cs.load_location(zone) if zone else None
    moment = datetime.datetime.fromisoformat(text).replace(tzinfo=tz or UTC)
    return moment.timestamp()


def wall(unix: int | None, zone: str | None = None) -> str | None:
    """Unix seconds as the wall clock in ``zone`` with its offset."""
    if unix is None:
        return None
    tz = cs.load_location(zone) if zone else None
    return datetime.datetime.fromtimestamp(unix, tz or UTC).isoformat()


# --- parsing: what is refused, with robfig's texts ------------------------------------------

INVALID: list[tuple[str, str]] = [
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
    ("   ", "expected exactly 5 fields, found 0: []"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * 32 * *", "end of range (32) above maximum (31): 32"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("*/ * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
    (
        "99999999999999999999 * * * *",
        "failed to parse int from 99999999999999999999: strconv.Atoi: parsing "
        '"99999999999999999999": value out of range',
    ),
    ("* * * foo *", 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'),
    ("@bogus", "unrecognized descriptor: @bogus"),
    ("@hourly ", "unrecognized descriptor: @hourly "),
    ("@every", "unrecognized descriptor: @every"),
    (
        "@every 1x",
        'failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"',
    ),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("@every .m", 'failed to parse duration @every .m: time: invalid duration ".m"'),
    ("@every  5m", 'failed to parse duration @every  5m: time: invalid duration " 5m"'),
    (
        "TZ=Mars/Olympus * * * * *",
        "provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
    ),
    ("CRON_TZ=../etc * * * * *", "provided bad location ../etc: time: invalid location name"),
]


@pytest.mark.parametrize(("spec", "message"), INVALID, ids=[c[0] or "<empty>" for c in INVALID])
def test_parse_standard_refuses_with_robfigs_text(spec: str, message: str) -> None:
    with pytest.raises(cs.ScheduleError) as raised:
        cs.parse_standard(spec)
    assert str(raised.value) == message


# --- parsing: what is accepted, and what it means -------------------------------------------

FIRST = "2024-03-01T12:03:00"  # a Friday

NEXT: list[tuple[str, str, str]] = [
    ("every minute", "* * * * *", "2024-03-01T12:04:00+00:00"),
    ("question mark is a star", "? ? ? ? ?", "2024-03-01T12:04:00+00:00"),
    ("step from star", "*/5 * * * *", "2024-03-01T12:05:00+00:00"),
    ("N/step means N-max/step", "7/20 * * * *", "2024-03-01T12:07:00+00:00"),
    ("range with step", "10-50/20 * * * *", "2024-03-01T12:10:00+00:00"),
    ("list", "1,2,58 * * * *", "2024-03-01T12:58:00+00:00"),
    ("empty list parts are skipped", "1,,2 13 * * *", "2024-03-01T13:01:00+00:00"),
    ("signed number", "+5 * * * *", "2024-03-01T12:05:00+00:00"),
    ("month names, any case", "0 0 1 Jun,DEC *", "2024-06-01T00:00:00+00:00"),
    ("weekday names and range", "0 9 * * MON-fri", "2024-03-04T09:00:00+00:00"),
    ("@hourly", "@hourly", "2024-03-01T13:00:00+00:00"),
    ("@daily", "@daily", "2024-03-02T00:00:00+00:00"),
    ("@midnight", "@midnight", "2024-03-02T00:00:00+00:00"),
    ("@weekly is Sunday", "@weekly", "2024-03-03T00:00:00+00:00"),
    ("@monthly", "@monthly", "2024-04-01T00:00:00+00:00"),
    ("@yearly", "@yearly", "2025-01-01T00:00:00+00:00"),
    ("@annually", "@annually", "2025-01-01T00:00:00+00:00"),
    ("@every keeps the phase of its argument", "@every 1h30m", "2024-03-01T13:33:00+00:00"),
    ("@every below a second is one second", "@every 10ms", "2024-03-01T12:03:01+00:00"),
    ("@every drops fractions of a second", "@every 1.9s", "2024-03-01T12:03:01+00:00"),
    # dayMatches: a star in either day field means both must match...
    ("dom with star dow", "0 0 13 * *", "2024-03-13T00:00:00+00:00"),
    ("dow with star dom", "0 0 * * 3", "2024-03-06T00:00:00+00:00"),
    ("the 13th or a Friday", "0 0 13 * 5", "2024-03-08T00:00:00+00:00"),
    # ...otherwise either is enough (DOM OR DOW).
    ("the 13th or a Wednesday in March", "0 0 13 3 3", "2024-03-06T00:00:00+00:00"),
    ("a stepped star is not a star", "0 0 */10 * 6", "2024-03-02T00:00:00+00:00"),
    ("a star with step 1 is a star", "0 0 */1 * 6", "2024-03-02T00:00:00+00:00"),
    ("a star with step 1 needs both", "0 0 */1 * 1", "2024-03-04T00:00:00+00:00"),
    ("leap day", "0 0 29 2 *", "2028-02-29T00:00:00+00:00"),
]


@pytest.mark.parametrize(("case", "spec", "expected"), NEXT, ids=[c[0] for c in NEXT])
def test_next_after_a_friday_noon(case: str, spec: str, expected: str) -> None:
    assert wall(cs.parse_standard(spec).next(at(FIRST))) == expected


def test_star_day_rule_reads_the_star_bit() -> None:
    """``getRange`` marks a field that was ``*`` (step 1) with the star bit; ``dayMatches``
    then needs both day fields. Two plain day fields are an OR: ``0 0 13 * 5`` on
    Sunday 1 September 2024 next runs Friday the 6th, then Friday the 13th."""
    plain = cs.parse_standard("0 0 13 * 5")
    assert isinstance(plain, cs.SpecSchedule)
    assert not plain.dom & cs.STAR_BIT
    assert not plain.dow & cs.STAR_BIT
    first = plain.next(at("2024-09-01T00:00:00"))
    assert wall(first) == "2024-09-06T00:00:00+00:00"
    assert wall(plain.next(first)) == "2024-09-13T00:00:00+00:00"
    star = cs.parse_standard("0 0 * * 5")
    assert isinstance(star, cs.SpecSchedule)
    assert star.dom & cs.STAR_BIT
    stepped = cs.parse_standard("0 0 */2 * 5")
    assert isinstance(stepped, cs.SpecSchedule)
    assert not stepped.dom & cs.STAR_BIT


def test_a_day_that_never_comes_has_no_next_time() -> None:
    """31 February parses but ``Next`` gives up after five years (Go's zero time)."""
    assert cs.parse_standard("0 0 31 2 *").next(at(FIRST)) is None


def test_a_field_of_only_commas_matches_nothing() -> None:
    assert cs.parse_standard(", * * * *").next(at(FIRST)) is None


def test_next_starts_after_the_given_second() -> None:
    """``Next`` is strictly after its argument, fractions of a second dropped first."""
    schedule = cs.parse_standard("*/5 * * * *")
    assert wall(schedule.next(at("2024-03-01T12:05:00"))) == "2024-03-01T12:10:00+00:00"
    assert wall(schedule.next(at("2024-03-01T12:04:59") + 0.9)) == "2024-03-01T12:05:00+00:00"


# --- time zones and daylight saving ---------------------------------------------------------

NEW_YORK = "America/New_York"


def test_tz_prefix_reads_the_schedule_in_that_zone() -> None:
    schedule = cs.parse_standard("CRON_TZ=Europe/Berlin 0 9 * * *")
    assert wall(schedule.next(at("2024-07-01T00:00:00")), "Europe/Berlin") == (
        "2024-07-01T09:00:00+02:00"
    )
    assert wall(schedule.next(at("2024-07-01T00:00:00"))) == "2024-07-01T07:00:00+00:00"


def test_spring_forward_skips_a_time_in_the_gap() -> None:
    """02:30 does not exist in New York on 10 March 2024: robfig's walk finds no 02:30
    that day (the day loop's hour correction lands at 01:00 or 03:00), so the run after
    9 March is 11 March."""
    schedule = cs.parse_standard(f"TZ={NEW_YORK} 30 2 * * *")
    first = schedule.next(at("2024-03-09T12:00:00", NEW_YORK))
    assert wall(first, NEW_YORK) == "2024-03-11T02:30:00-04:00"


def test_fall_back_runs_a_repeated_time_twice() -> None:
    """01:30 happens twice in New York on 3 November 2024 (EDT, then EST): robfig runs both."""
    schedule = cs.parse_standard(f"TZ={NEW_YORK} 30 1 * * *")
    runs = []
    t = at("2024-11-02T12:00:00", NEW_YORK)
    for _ in range(3):
        t = schedule.next(t)
        runs.append(wall(t, NEW_YORK))
    assert runs == [
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-04T01:30:00-05:00",
    ]


def test_hourly_across_spring_forward_has_no_2am() -> None:
    schedule = cs.parse_standard(f"TZ={NEW_YORK} 0 * * * *")
    t = schedule.next(at("2024-03-10T00:30:00", NEW_YORK))
    runs = []
    for _ in range(3):
        runs.append(wall(t, NEW_YORK))
        t = schedule.next(t)
    assert runs == [
        "2024-03-10T01:00:00-05:00",
        "2024-03-10T03:00:00-04:00",
        "2024-03-10T04:00:00-04:00",
    ]


def test_daily_midnight_where_midnight_does_not_exist() -> None:
    """Havana springs forward at midnight (00:00 -> 01:00 on 10 March 2024): the day loop's
    correction ("add an hour if it is 23, subtract one if it is 1") finds the day's first
    hour, 01:00, which the hour field (0) does not match, so the run is the next midnight."""
    zone = "America/Havana"
    schedule = cs.parse_standard(f"TZ={zone} 0 0 * * *")
    assert wall(schedule.next(at("2024-03-09T12:00:00", zone)), zone) == (
        "2024-03-11T00:00:00-04:00"
    )


def test_go_date_reads_a_gap_time_with_the_offset_before_the_gap() -> None:
    """``time.Date`` for 02:30 on New York's spring-forward day: the offset at 02:30 read as
    UTC is EST, 02:30 EST is 07:30Z (after the change), whose offset EDT gives 06:30Z,
    i.e. 01:30 EST, as Go's Date computes it."""
    zone = cs.load_location(NEW_YORK)
    assert wall(cs.go_date(zone, 2024, 3, 10, 2, 30), NEW_YORK) == "2024-03-10T01:30:00-05:00"


def test_go_date_normalises_out_of_range_fields() -> None:
    assert wall(cs.go_date(None, 2024, 13, 1)) == "2025-01-01T00:00:00+00:00"
    assert wall(cs.go_date(None, 2024, 2, 30)) == "2024-03-01T00:00:00+00:00"
    assert wall(cs.go_date(None, 2024, 1, 0)) == "2023-12-31T00:00:00+00:00"


# --- Go's helpers -------------------------------------------------------------------------------

DURATIONS: list[tuple[str, int]] = [
    ("0", 0),
    ("5s", 5_000_000_000),
    ("1h30m", 5_400_000_000_000),
    ("-1.5m", -90_000_000_000),
    ("+2ms", 2_000_000),
    ("1µs", 1_000),
    ("1μs", 1_000),
    (".5s", 500_000_000),
    ("1.s", 1_000_000_000),
]


@pytest.mark.parametrize(("text", "nanoseconds"), DURATIONS, ids=[d[0] for d in DURATIONS])
def test_parse_go_duration(text: str, nanoseconds: int) -> None:
    assert cs.parse_go_duration(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("-", 'time: invalid duration "-"'),
        ("1", 'time: missing unit in duration "1"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("9999999999999999999h", 'time: invalid duration "9999999999999999999h"'),
    ],
)
def test_parse_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(cs.ScheduleError) as raised:
        cs.parse_go_duration(text)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Mars/Olympus", "unknown time zone Mars/Olympus"),
        ("../etc/passwd", "time: invalid location name"),
        ("/etc/localtime", "time: invalid location name"),
    ],
)
def test_load_location_errors(name: str, message: str) -> None:
    with pytest.raises(cs.UnknownTimeZoneError) as raised:
        cs.load_location(name)
    assert str(raised.value) == message


def test_utc_and_local_are_utc() -> None:
    assert cs.load_location("") is None
    assert cs.load_location("UTC") is None
    assert cs.load_location("Local") is None


def test_go_fields_split_on_gos_spaces_only() -> None:
    """``strings.Fields`` splits on ``unicode.IsSpace`` (NBSP too, not the ASCII separators)."""
    assert cs.go_fields(" a\tb\u00a0c\x1cd ") == ["a", "b", "c\x1cd"]
