"""``clock.rfc3339_micro`` formats as ``datetime`` does (its rounding and carries)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kubeprio.clock import rfc3339_micro


def _by_datetime(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@given(st.floats(min_value=-2e9, max_value=4e9, allow_nan=False, allow_infinity=False))
def test_any_time_formats_as_datetime_formats_it(seconds: float) -> None:
    assert rfc3339_micro(seconds) == _by_datetime(seconds)


def test_halves_and_carries() -> None:
    # 0.9999996 s rounds up into the next second; exact halves of a microsecond go to even.
    for seconds in (1_700_000_000.9999996, 1_700_000_000.0000005, 0.0000005, 0.0000015, 59.9999999):
        assert rfc3339_micro(seconds) == _by_datetime(seconds)
    assert rfc3339_micro(1_700_000_000.9999996) == "2023-11-14T22:13:21.000000Z"
