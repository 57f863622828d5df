"""Go's ``float32``: a number as a field or constant typed ``float32`` holds it.

Some upstream values are float32, not float64: the kubelet's eviction percentages
(``parsePercentage``, used by ``kubelet.eviction``) and the event spam filter's refill
rate (``defaultSpamQPS``, used by ``client.eventcorrelator``). Python floats are doubles,
so those values are rounded to single precision here, once, to compare and count as
upstream does. Pure: no I/O.
"""

from __future__ import annotations

import struct


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (Go's ``float32(value)``)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])
