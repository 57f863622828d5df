"""The node lifecycle controller's rate-limited tainting queue, on the injected clock.

Mirrors ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go``
(``RateLimitedTimedQueue``, ``UniqueQueue``) and the token bucket of client-go's
``flowcontrol.NewTokenBucketRateLimiter`` with burst 1 (``EvictionRateLimiterBurst``):

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

BURST: Final = 1
"""``EvictionRateLimiterBurst``."""
RETRY_NUDGE: Final = 1e-9
"""``val.ProcessAt = now.Add(wait + 1)``: one nanosecond past the wait."""


class TokenBucket:
    """``tokenBucketRateLimiter`` with burst 1: starts full, refills at ``qps``."""

    def __init__(self, qps: float, now: float) -> None:
        self.qps = qps
        self._tokens = float(BURST)
        self._last = now

    def _refill(self, now: float) -> None:
        if self.qps > 0 and now > self._last:
            self._tokens = min(float(BURST), self._tokens + (now - self._last) * self.qps)
        self._last = max(self._last, now)

    def try_accept(self, now: float) -> bool:
        """``TryAccept``: take a token if one is there."""
        if self.qps <= 0:
            return False
        self._refill(now)
        if self._tokens >= 1.0 - 1e-9:
            self._tokens -= 1.0
            return True
        return False

    def available_at(self, now: float) -> float | None:
        """When the next token is there (None: never)."""
        if self.qps <= 0:
            return None
        self._refill(now)
        missing = 1.0 - self._tokens
        return now if missing <= 1e-9 else now + missing / self.qps


Action = Callable[[str], tuple[bool, float]]
"""Process one value: (done, wait before a retry in seconds)."""


class RateLimitedTimedQueue:
    """Unique values processed in ``processAt`` order, at most ``qps`` per second."""

    def __init__(self, qps: float, now: float) -> None:
        self.limiter = TokenBucket(qps, now)
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
        if self.limiter.qps == qps:
            return
        drained = not self.limiter.try_accept(now)
        self.limiter = TokenBucket(qps, now)
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
