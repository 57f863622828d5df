"""``kubeprio.io/*`` annotation values: Go durations, seconds and usage lists."""

from __future__ import annotations

import pytest

from kubeprio.api import annotations

DURATIONS = [
    ("90s", 90.0),
    ("5m", 300.0),
    ("1h30m", 5400.0),
    ("1.5h", 5400.0),
    ("300ms", 0.3),
    ("0", 0.0),
    ("-2s", -2.0),
    (".5s", 0.5),
]


@pytest.mark.parametrize(("text", "seconds"), DURATIONS, ids=[t for t, _ in DURATIONS])
def test_parse_duration_like_go(text: str, seconds: float) -> None:
    assert annotations.parse_duration(text) == pytest.approx(seconds)


BAD_DURATIONS = [
    ("", 'time: invalid duration ""'),
    ("5", 'time: missing unit in duration "5"'),
    ("5x", 'time: unknown unit "x" in duration "5x"'),
    ("abc", 'time: invalid duration "abc"'),
]


@pytest.mark.parametrize(
    ("text", "message"), BAD_DURATIONS, ids=[t or "empty" for t, _ in BAD_DURATIONS]
)
def test_bad_durations_use_gos_messages(text: str, message: str) -> None:
    with pytest.raises(annotations.AnnotationError) as info:
        annotations.parse_duration(text)
    assert str(info.value) == message


def test_termination_seconds_take_numbers_or_durations() -> None:
    assert annotations.parse_seconds("20") == 20.0
    assert annotations.parse_seconds("2.5") == 2.5
    assert annotations.parse_seconds("1m") == 60.0


def test_usage_entries() -> None:
    entries = annotations.parse_usage("memory=900Mi, ephemeral-storage=1Gi,sidecar:memory=10Mi")
    assert [(e.container, e.resource, e.quantity.value()) for e in entries] == [
        (None, "memory", 900 * 1024**2),
        (None, "ephemeral-storage", 1024**3),
        ("sidecar", "memory", 10 * 1024**2),
    ]


@pytest.mark.parametrize("text", ["memory", "memory=", "memory=lots", ":memory=1Mi", "memory=-1Mi"])
def test_bad_usage_is_refused(text: str) -> None:
    with pytest.raises(annotations.AnnotationError):
        annotations.parse_usage(text)
