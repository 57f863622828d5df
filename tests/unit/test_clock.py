"""Timestamp formatting: ``rfc3339_micro`` writes what ``datetime`` would.

``metav1.MicroTime`` (an Event's ``eventTime``, a Lease's ``renewTime``) carries
microseconds; the formatter builds the text from the memoised whole second and the
rounded fraction, so it must round exactly as ``datetime.fromtimestamp`` does (half to
even, carrying into the next second) for every instant a run can produce.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.clock import rfc3339_micro


def _reference(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1_767_225_600.0, "2026-01-01T00:00:00.000000Z"),
        (1_767_225_600.25, "2026-01-01T00:00:00.250000Z"),
        (1_767_225_659.9999996, "2026-01-01T00:01:00.000000Z"),  # carries into the minute
        (0.0000005, "1970-01-01T00:00:00.000000Z"),  # a tie rounds to even
        (0.0000015, "1970-01-01T00:00:00.000002Z"),
        (-0.5, "1969-12-31T23:59:59.500000Z"),
    ],
)
def test_known_instants(seconds: float, text: str) -> None:
    assert rfc3339_micro(seconds) == text == _reference(seconds)


@given(st.floats(min_value=-2e9, max_value=4e9, allow_nan=False))
def test_matches_datetime_everywhere(seconds: float) -> None:
    assert rfc3339_micro(seconds) == _reference(seconds)


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=2_000_000))
def test_matches_datetime_on_half_microseconds(second: int, halves: int) -> None:
    """Instants on and near the rounding ties (multiples of half a microsecond)."""
    seconds = second + halves * 5e-7
    assert rfc3339_micro(seconds) == _reference(seconds)
