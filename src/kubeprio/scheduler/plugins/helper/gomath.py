"""Go's integer and float rounding rules, for scores that must equal upstream's bit for bit.

Go's ``/`` on integers truncates toward zero and ``math.Round`` rounds half away from
zero; Python's ``//`` floors and ``round`` rounds half to even. Scores are computed
with these helpers wherever the two could differ (negative operands, exact halves).
Pure: standard library only.
"""

from __future__ import annotations

import math


def go_div(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` on Go integers: the quotient truncated toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def go_round(value: float) -> float:
    """Go ``math.Round``: the nearest integer, halves away from zero."""
    truncated = math.trunc(value)
    # value - truncated is exact for floats, so the comparison with 0.5 is too.
    if abs(value - truncated) >= 0.5:
        truncated += 1 if value > 0 else -1
    return float(truncated)
