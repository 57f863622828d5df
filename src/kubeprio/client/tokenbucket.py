"""``TokenBucket``: client-go's token-bucket rate limiter, on a time the caller passes in.

``golang.org/x/time/rate.Limiter``, as ``flowcontrol.NewTokenBucketRateLimiter`` wraps it:
the bucket starts full (``burst`` tokens), refills ``rate`` tokens a second up to
``burst``, and ``try_accept`` takes one token if there is one. A rate of 0 or less never
grants anything (``flowcontrol.NewFakeNeverRateLimiter``, which callers build for it). A
clock that went backwards adds nothing (``rate.Limiter.advance`` clamps it).

Two users, which differ in two details each keeps as a parameter so that its numbers stay
what they were:

* the core/v1 event recorder's spam filter (``client.eventcorrelator``): burst 25, and as
  ``rate.Limiter`` a refusal changes nothing (``reserveN`` updates its state only when it
  grants) and a token is whole only at 1.0;
* the node lifecycle controller's tainting queue (``controllers.ratelimitedqueue``):
  burst 1, ``available_at`` tells when to wake up, every look keeps the refill so far
  (``keeps_refill``), and a token short by ``tolerance`` (1e-9) counts as whole: virtual
  time jumps to the instant ``available_at`` names, where float rounding may leave the
  refill a hair short of it.

Pure state: no I/O, no clock of its own.
"""

from __future__ import annotations


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` held, starting full at ``now``."""

    def __init__(
        self,
        rate: float,
        burst: int,
        now: float,
        *,
        tolerance: float = 0.0,
        keeps_refill: bool = False,
    ) -> None:
        self.rate = rate
        self._burst = burst
        self._tolerance = tolerance
        """How far short of 1.0 a token may be and still be taken."""
        self._keeps_refill = keeps_refill
        """Whether a look that takes nothing (a refusal, ``available_at``) stores the refill
        up to its time; otherwise the state moves only when a token is taken."""
        self._tokens = float(burst)
        self._last = now

    def _tokens_at(self, now: float) -> float:
        if now <= self._last:
            return self._tokens
        return min(float(self._burst), self._tokens + (now - self._last) * self.rate)

    def _look(self, now: float) -> float:
        """The tokens at ``now``, stored if this bucket keeps its refills."""
        tokens = self._tokens_at(now)
        if self._keeps_refill:
            self._tokens = tokens
            self._last = max(self._last, now)
        return tokens

    def try_accept(self, now: float) -> bool:
        """``TryAccept``: take a token if one is there."""
        if self.rate <= 0:
            return False
        tokens = self._look(now)
        if tokens < 1.0 - self._tolerance:
            return False
        self._tokens = tokens - 1.0
        self._last = max(self._last, now)
        return True

    def available_at(self, now: float) -> float | None:
        """When the next token is there (``now`` if it is; None: never)."""
        if self.rate <= 0:
            return None
        missing = 1.0 - self._look(now)
        return now if missing <= self._tolerance else now + missing / self.rate
