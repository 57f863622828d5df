"""``api.gofloat.float32``: Go's ``float32(x)`` conversion (round to nearest, ties to even),
as the kubelet's eviction percentages and client-go's ``defaultSpamQPS`` hold values."""

from __future__ import annotations

import pytest

from kubeprio.api.gofloat import float32


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (0.5, 0.5),  # exact in float32
        (0.1, 0.10000000149011612),
        (1.0 / 300.0, 0.0033333334140479565),  # defaultSpamQPS: a hair above 1/300
        (0.075, 0.07500000298023224),  # a 7.5% eviction threshold
        (1.0 + 2.0**-24, 1.0),  # a tie rounds to even
    ],
)
def test_float32_rounds_to_single_precision(value: float, rounded: float) -> None:
    assert float32(value) == rounded
