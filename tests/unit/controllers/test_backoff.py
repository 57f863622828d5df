"""Per-key backoff as client-go's ``flowcontrol.Backoff`` (``backoff_test.go``).

The DaemonSet controller's setting: 1 s initial, 15 min maximum, no jitter.
"""

from __future__ import annotations

from kubeprio.controllers.backoff import Backoff
from tests.conftest import ManualClock


def test_delay_doubles_up_to_the_maximum() -> None:
    """TestSlowBackoff: 1, 2, 4, ... capped at the maximum."""
    clock = ManualClock()
    backoff = Backoff(clock, initial=1.0, maximum=5.0)
    delays = []
    for _ in range(5):
        backoff.next("k")
        delays.append(backoff.get("k"))
    assert delays == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff.get("other") == 0.0


def test_in_backoff_until_the_delay_has_passed_since_the_last_update() -> None:
    """IsInBackOffSinceUpdate: strictly less than the delay since the last Next."""
    clock = ManualClock()
    backoff = Backoff(clock)
    assert not backoff.in_backoff_since_update("k")
    backoff.next("k")
    assert backoff.in_backoff_since_update("k")
    clock.time += 0.999
    assert backoff.in_backoff_since_update("k")
    clock.time += 0.001
    assert not backoff.in_backoff_since_update("k")


def test_an_entry_quiet_for_twice_the_maximum_starts_over_and_is_collected() -> None:
    """hasExpired: quiet for more than 2 x maximum resets the delay; GC drops it."""
    clock = ManualClock()
    backoff = Backoff(clock, initial=1.0, maximum=10.0)
    backoff.next("k")
    backoff.next("k")
    assert backoff.get("k") == 2.0
    clock.time += 20.5
    backoff.gc()
    assert len(backoff) == 0
    backoff.next("k")
    assert backoff.get("k") == 1.0
