"""Per-key exponential backoff on an injected clock (client-go's ``flowcontrol.Backoff``).

The DaemonSet controller uses it to pace the replacement of failed daemon pods on a node
(kube-controller-manager builds it with ``NewBackOff(1s, 15m)``, no jitter):

* ``next(key)`` records an event: the first one (or the first after the key has been
  quiet for twice the maximum) sets the delay to the initial value, later ones double it,
  up to the maximum;
* ``in_backoff_since_update(key)``: less than the current delay has passed since the last
  ``next`` (and the entry has not expired);
* ``gc()`` drops expired entries (upstream runs it every minute).

No threads, no sleeping; time from the ``Clock``.
"""

from __future__ import annotations

from typing import Final

from kubeprio.clock import Clock

FAILED_POD_INITIAL_BACKOFF: Final = 1.0
FAILED_POD_MAX_BACKOFF: Final = 15 * 60.0


class Backoff:
    """``flowcontrol.Backoff`` without jitter."""

    def __init__(
        self,
        clock: Clock,
        *,
        initial: float = FAILED_POD_INITIAL_BACKOFF,
        maximum: float = FAILED_POD_MAX_BACKOFF,
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._max = maximum
        self._entries: dict[str, tuple[float, float]] = {}
        """key -> (current delay, time of the last ``next``)."""

    def __len__(self) -> int:
        return len(self._entries)

    def _expired(self, now: float, last: float) -> bool:
        """``hasExpired``: quiet for more than twice the maximum."""
        return now - last > 2 * self._max

    def get(self, key: str) -> float:
        """The current delay of ``key`` (0 when it has none)."""
        entry = self._entries.get(key)
        return 0.0 if entry is None else entry[0]

    def next(self, key: str) -> None:
        """``Next``: start at the initial delay, or double it (capped)."""
        now = self._clock.now()
        entry = self._entries.get(key)
        if entry is None or self._expired(now, entry[1]):
            delay = self._initial
        else:
            delay = min(entry[0] * 2, self._max)
        self._entries[key] = (delay, now)

    def in_backoff_since_update(self, key: str) -> bool:
        """``IsInBackOffSinceUpdate``: the delay since the last ``next`` has not passed."""
        entry = self._entries.get(key)
        if entry is None:
            return False
        now = self._clock.now()
        if self._expired(now, entry[1]):
            return False
        return now - entry[1] < entry[0]

    def gc(self) -> None:
        """``GC``: forget the expired entries."""
        now = self._clock.now()
        for key in [k for k, (_, last) in self._entries.items() if self._expired(now, last)]:
            del self._entries[key]
