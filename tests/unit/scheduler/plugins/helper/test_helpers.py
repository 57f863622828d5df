"""Plugin helpers, ported from upstream ``helper/normalize_score_test.go``
(``TestDefaultNormalizeScore``) and ``helper/shape_score_test.go``
(``TestBrokenLinearFunction``), plus Go rounding rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.gomath import go_div, go_round
from kubeprio.scheduler.plugins.helper.normalize_score import default_normalize_score
from kubeprio.scheduler.plugins.noderesources.strategies import broken_linear_function

NORMALIZE_CASES = [
    ([10, 20, 30, 40, 50], False, [20, 40, 60, 80, 100]),
    ([10, 20, 30, 40, 50], True, [80, 60, 40, 20, 0]),
    ([0, 0, 0], False, [0, 0, 0]),
    ([0, 0, 0], True, [100, 100, 100]),
    ([100, 50, 0], False, [100, 50, 0]),
    ([7, 3, 1], False, [100, 42, 14]),
    ([7, 3, 1], True, [0, 58, 86]),
]


@pytest.mark.parametrize(
    ("scores", "reverse", "want"), NORMALIZE_CASES, ids=[f"{c[0]}-{c[1]}" for c in NORMALIZE_CASES]
)
def test_default_normalize_score(scores, reverse, want):
    entries = [framework.NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    default_normalize_score(100, reverse, entries)
    assert [e.score for e in entries] == want
    assert [e.name for e in entries] == [f"n{i}" for i in range(len(scores))]


SHAPES = [
    ([(10, 1), (90, 9)], {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 20: 2, 89: 8, 90: 9, 99: 9, 110: 9}),
    (
        [(0, 2), (40, 10), (100, 0)],
        {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 50: 9, 70: 5, 100: 0, 110: 0},
    ),
    ([(0, 2), (40, 2), (100, 2)], {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}),
]


@pytest.mark.parametrize(("points", "expected"), SHAPES, ids=["increasing", "up-and-down", "flat"])
def test_broken_linear_function(points, expected):
    """Go's truncating division: at 50 on the falling segment 10 - 100/60 is 9, not 8."""
    function = broken_linear_function(points)
    assert {p: function(p) for p in expected} == expected


@given(st.integers(-(10**12), 10**12), st.integers(-(10**6), 10**6).filter(bool))
def test_go_div_truncates_toward_zero(a, b):
    q = go_div(a, b)
    assert q == int(a / b) if abs(a) < 2**50 else True
    assert abs(q * b) <= abs(a)
    assert (a - q * b == 0) or ((a - q * b > 0) == (a > 0))


ROUND_CASES = [
    (0.5, 1.0),
    (1.5, 2.0),
    (2.5, 3.0),
    (-0.5, -1.0),
    (-2.5, -3.0),
    (0.49999999999999994, 0.0),
    (37.5, 38.0),
    (2.4, 2.0),
]


@pytest.mark.parametrize(("value", "want"), ROUND_CASES, ids=[str(c[0]) for c in ROUND_CASES])
def test_go_round_is_half_away_from_zero(value, want):
    assert go_round(value) == want
