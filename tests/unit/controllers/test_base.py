"""Work queue, expectations and the retry policy (client-go ``workqueue`` semantics)."""

from __future__ import annotations

import random

import pytest

from kubeprio.api import errors
from kubeprio.apiserver.service import ApiService
from kubeprio.controllers.base import Controller, Expectations, WorkQueue
from kubeprio.errors import PermanentError, TemporaryError
from tests.conftest import ManualClock


def test_keys_are_deduplicated_and_come_out_in_due_order(clock: ManualClock) -> None:
    queue = WorkQueue(clock)
    queue.add_after("b", 5)
    queue.add("a")
    queue.add("a")
    queue.add_after("c", 1)
    assert queue.pop_due() == ["a"]
    assert queue.next_wakeup() == clock.now() + 1
    clock.advance(5)
    assert queue.pop_due() == ["c", "b"]
    assert queue.next_wakeup() is None


def test_the_earliest_request_wins(clock: ManualClock) -> None:
    queue = WorkQueue(clock)
    queue.add_after("k", 10)
    queue.add_after("k", 3)
    queue.add_after("k", 7)
    assert queue.next_wakeup() == clock.now() + 3
    assert len(queue) == 1


RATE_LIMITS = [(1, 0.005), (2, 0.01), (3, 0.02), (20, 1000.0)]


@pytest.mark.parametrize(("failures", "delay"), RATE_LIMITS, ids=[str(f) for f, _ in RATE_LIMITS])
def test_rate_limited_requeue_doubles_from_5ms_to_1000s(
    clock: ManualClock, failures: int, delay: float
) -> None:
    """``ItemExponentialFailureRateLimiter(5ms, 1000s)``."""
    queue = WorkQueue(clock)
    for _ in range(failures):
        queue.pop_due()
        queue.add_rate_limited("k")
        clock.advance(2000)
    clock.advance(-2000)
    assert queue.next_wakeup() == pytest.approx(clock.now() + delay)
    queue.forget("k")
    assert queue.num_requeues("k") == 0


def test_expectations_wait_for_observations_or_five_minutes(clock: ManualClock) -> None:
    expectations = Expectations(clock)
    assert expectations.satisfied("rs")
    expectations.expect_creations("rs", 2)
    expectations.creation_observed("rs")
    assert not expectations.satisfied("rs")
    expectations.creation_observed("rs")
    assert expectations.satisfied("rs")
    expectations.expect_deletions("rs", ["ns/a"])
    assert not expectations.satisfied("rs")
    clock.advance(301)
    assert expectations.satisfied("rs")


class Flaky(Controller):
    def __init__(self, api: ApiService, clock: ManualClock, outcome: Exception | None) -> None:
        super().__init__(api, clock=clock, rng=random.Random(0))
        self.outcome = outcome
        self.calls = 0

    def reconcile(self, key: str) -> None:
        self.calls += 1
        if self.outcome is not None:
            raise self.outcome


OUTCOMES = [
    (None, None),
    (TemporaryError("later", delay=30), 30.0),
    (errors.conflict("pods", "", "x"), 0.005),
    (PermanentError("give up"), None),
]


@pytest.mark.parametrize(
    ("outcome", "retry_after"), OUTCOMES, ids=["ok", "temporary", "api-error", "permanent"]
)
def test_retry_policy(
    api: ApiService, clock: ManualClock, outcome: Exception | None, retry_after: float | None
) -> None:
    controller = Flaky(api, clock, outcome)
    controller.queue.add("default/x")
    assert controller.run_once() == 1
    wakeup = controller.next_wakeup()
    if retry_after is None:
        assert wakeup is None
    else:
        assert wakeup == pytest.approx(clock.now() + retry_after)


def test_bugs_propagate(api: ApiService, clock: ManualClock) -> None:
    controller = Flaky(api, clock, ValueError("bug"))
    controller.queue.add("k")
    with pytest.raises(ValueError, match="bug"):
        controller.run_once()
