"""Time as a dependency: the ``Clock`` protocol and the wall-clock implementation.

Library code never reads the wall clock or sleeps (docs/design.md, "Determinism and
time"). Components receive a ``Clock`` from their composition root: ``RealClock`` in
``kubeprio serve``, ``sim.engine.SimClock`` in ``kubeprio simulate`` and in tests.
Times are float seconds since the Unix epoch; ``rfc3339`` renders them the way the
Kubernetes API does (second precision, UTC, ``Z`` suffix).

Standard library only (layer 6).
"""

from __future__ import annotations

import functools
import math
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """A source of the current time, in seconds since the Unix epoch."""

    def now(self) -> float:
        """Return the current time."""
        ...


class RealClock:
    """The wall clock; only composition roots (``cli``) construct it."""

    def now(self) -> float:
        """Return the wall-clock time."""
        return time.time()


@functools.lru_cache(maxsize=64)
def _rfc3339_second(second: int) -> str:
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339(seconds: float) -> str:
    """Format ``seconds`` as a Kubernetes ``metav1.Time`` string (``2024-01-02T03:04:05Z``).

    Timestamps have second precision and writes come in bursts within one second, so the
    last few formatted seconds are memoised (a pure cache).
    """
    return _rfc3339_second(int(seconds))


def rfc3339_micro(seconds: float) -> str:
    """Format ``seconds`` as a ``metav1.MicroTime`` string (``...T03:04:05.123456Z``).

    The microseconds as ``datetime.fromtimestamp`` rounds them (half to even, a carry
    into the next second), the seconds through ``rfc3339``'s memo: each event carries
    one, and a formatting ``datetime`` per event costs more than the rest of it.
    """
    if seconds < 0:
        return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fraction, whole = math.modf(seconds)
    micros = round(fraction * 1e6)
    if micros >= 1_000_000:
        whole += 1.0
        micros -= 1_000_000
    return f"{_rfc3339_second(int(whole))[:-1]}.{micros:06d}Z"


@functools.lru_cache(maxsize=4096)
def parse_rfc3339(text: str) -> float:
    """Parse a Kubernetes timestamp (``Z`` or offset form, optional fraction) to seconds.

    Memoised: the scheduler reads the same few start times (one-second precision) at
    every update of a pod on a node.
    """
    normalized = text.strip()
    if normalized.endswith(("Z", "z")):
        normalized = normalized[:-1] + "+00:00"
    parsed = datetime.fromisoformat(normalized)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
