"""The node lifecycle controller's rate-limited tainting queue, on the injected clock.

Mirrors ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go``
(``RateLimitedTimedQueue``, ``UniqueQueue``), limited by client-go's
``flowcontrol.NewTokenBucketRateLimiter`` with burst 1 (``EvictionRateLimiterBurst``;
``client.tokenbucket``):

* a node is added once (``Add``); after it has been processed it stays in the set, so it
  is not added again until ``Remove`` (the node became Ready, or its taint changed);
* ``try_`` processes due nodes in ``processAt`` order while the bucket has a token; an
  action that fails is retried after the wait it names;
* a rate of 0 or less is ``NewFakeNeverRateLimiter``: nothing is processed.

Upstream tries every 100 ms (``NodeEvictionPeriod``); here ``next_wakeup`` names the
instant the head is due and a token is there, so virtual time jumps to it. Pure state, no
I/O; the controller does the writes in the action it passes.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Final

from kubeprio.client.tokenbucket import TokenBucket

BURST: Final = 1
"""``EvictionRateLimiterBurst``."""
RETRY_NUDGE: Final = 1e-9
"""``val.ProcessAt = now.Add(wait + 1)``: one nanosecond past the wait."""
TOKEN_TOLERANCE: Final = 1e-9
"""A token this short of whole is taken: ``next_wakeup`` lands on the instant the bucket
names, where float rounding may leave the refill a hair short."""


def _limiter(qps: float, now: float) -> TokenBucket:
    """The queue's bucket: burst 1, keeping each refill it computes (``client.tokenbucket``)."""
    return TokenBucket(qps, BURST, now, tolerance=TOKEN_TOLERANCE, keeps_refill=True)


Action = Callable[[str], tuple[bool, float]]
"""Process one value: (done, wait before a retry in seconds)."""


class RateLimitedTimedQueue:
    """Unique values processed in ``processAt`` order, at most ``qps`` per second."""

    def __init__(self, qps: float, now: float) -> None:
        self.limiter = _limiter(qps, now)
        self._heap: list[tuple[float, int, str]] = []
        self._queued: dict[str, tuple[float, int]] = {}
        self._set: set[str] = set()
        self._sequence = 0

    def __contains__(self, value: object) -> bool:
        return value in self._set

    def add(self, value: str, now: float) -> bool:
        """``Add``: queue ``value`` now unless it was added and not removed since."""
        if value in self._set:
            return False
        self._set.add(value)
        self._push(value, now)
        return True

    def remove(self, value: str) -> bool:
        """``Remove``: forget ``value`` so it may be added again; False if unknown."""
        if value not in self._set:
            return False
        self._set.discard(value)
        self._queued.pop(value, None)
        return True

    def swap_limiter(self, qps: float, now: float) -> None:
        """``SwapLimiter``: a new rate; a waiting bucket hands its debt to the new one."""
        if self.limiter.rate == qps:
            return
        drained = not self.limiter.try_accept(now)
        self.limiter = _limiter(qps, now)
        if qps > 0 and drained:
            self.limiter.try_accept(now)

    def _push(self, value: str, at: float) -> None:
        self._sequence += 1
        self._queued[value] = (at, self._sequence)
        heapq.heappush(self._heap, (at, self._sequence, value))

    def _head(self) -> tuple[float, str] | None:
        while self._heap:
            at, sequence, value = self._heap[0]
            if self._queued.get(value) == (at, sequence):
                return at, value
            heapq.heappop(self._heap)
        return None

    def try_(self, action: Action, now: float) -> int:
        """``Try``: process due values while tokens last; return how many were tried."""
        tried = 0
        while (head := self._head()) is not None:
            at, value = head
            if not self.limiter.try_accept(now):
                break
            if now < at:
                break
            tried += 1
            done, wait = action(value)
            del self._queued[value]
            if not done:
                self._push(value, now + wait + RETRY_NUDGE)
        return tried

    def next_wakeup(self, now: float) -> float | None:
        """When ``try_`` next has something to do: the head is due and a token is there."""
        head = self._head()
        if head is None:
            return None
        token = self.limiter.available_at(now)
        if token is None:
            return None
        return max(head[0], token, now) if not math.isinf(token) else None
