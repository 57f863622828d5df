"""Controllers' writes that wait on admission webhooks (``apiserver.controllerwebhooks``,
``client.writepending``), with webhooks answered in process on the worker threads.

On a real cluster a controller's write blocks its worker until the webhook answers, then
ends as any write would. Here it raises ``WritePendingError`` and is retried; the
central property is differential: the retried write ends exactly as the same write with
every webhook called in place (same stored object, same refusal, same warnings), and
each webhook is called once per review (``webhook/mutating/dispatcher.go``,
``webhook/validating/dispatcher.go``), so no object is created twice. Also: identical
writes in one sync are distinct writes (a ReplicaSet's pods from one template);
callers that do not opt in call in place; ``controllers.base.Controller`` requeues the
key when the answers are in (client-go's workqueue after a failed call).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.model import evolve
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.client.writepending import RETRYABLE_WRITES, WritePendingError
from kubeprio.controllers.base import Controller
from tests.conftest import ManualClock
from tests.unit.apiserver.test_webhookwaits import (
    SCENARIOS,
    ThreadedCaller,
    _register,
    _service,
    _without_uids,
    allow,
    deferring,
    hook,
    pod,
)


def _stored_or_refused(write: Callable[[], Any]) -> tuple[str, Any, tuple[str, ...]]:
    try:
        return ("stored", to_dict(write()), ())
    except errors.StatusError as exc:
        return ("refused", to_dict(exc.status), exc.warnings)


async def _retry_until_done(write: Callable[[], Any]) -> tuple[tuple[str, Any, Any], int]:
    """A controller's loop: the write, retried once its answers are in; with how many
    times it was pending."""
    pending = 0
    token = RETRYABLE_WRITES.set(True)
    try:
        while True:
            try:
                return _stored_or_refused(write), pending
            except WritePendingError as exc:
                pending += 1
                answered = asyncio.Event()
                exc.when_answered(answered.set)
                await answered.wait()
    finally:
        RETRYABLE_WRITES.reset(token)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_retried_controller_write_ends_as_the_same_write_called_in_place(
    scenario: str,
) -> None:
    handlers, mutating, validating, make = SCENARIOS[scenario]
    in_place_caller, deferred_caller = ThreadedCaller(handlers), ThreadedCaller(handlers)
    in_place, deferred = _service(in_place_caller), _service(deferred_caller)
    for api in (in_place, deferred):
        _register(api, mutating, validating)
    writes, waits = deferring(deferred)
    # The logical write draws from a stream of its own: give the in-place one the same.
    in_place.rng.setstate(random.Random(in_place.rng.getrandbits(64)).getstate())

    expected = _stored_or_refused(lambda: in_place.create(make()))
    got, pending = asyncio.run(_retry_until_done(lambda: deferred.create(make())))
    waits.close()

    assert got == expected
    assert pending >= 1
    # Same reviews, each posted once, from worker threads; the write's entry is gone.
    assert _without_uids(deferred_caller.calls) == _without_uids(in_place_caller.calls)
    assert writes.posted == len(deferred_caller.calls)
    assert all(thread.startswith("webhook") for _, _, thread in deferred_caller.calls)
    assert not writes._writes


def test_a_retry_before_the_answer_posts_nothing_again() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    writes, waits = deferring(api)
    caller.release.clear()

    async def main() -> None:
        token = RETRYABLE_WRITES.set(True)
        try:
            for _ in range(3):  # rate-limited retries while the webhook still thinks
                with pytest.raises(WritePendingError):
                    api.create(pod("web", generate=True))
                await asyncio.sleep(0.01)  # each retry in a later stretch of the loop
            assert api.store.count("pods") == 0
            caller.release.set()
            result, _ = await _retry_until_done(lambda: api.create(pod("web", generate=True)))
        finally:
            RETRYABLE_WRITES.reset(token)
        assert result[0] == "stored"

    asyncio.run(main())
    waits.close()
    assert caller.paths() == ["/v"]
    assert writes.posted == 1
    assert api.store.count("pods") == 1


def test_identical_writes_in_one_sync_are_distinct_writes() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    writes, waits = deferring(api)

    async def main() -> list[str]:
        token = RETRYABLE_WRITES.set(True)
        try:
            answered = [asyncio.Event(), asyncio.Event()]
            for event in answered:  # one sync creates two pods from one template
                with pytest.raises(WritePendingError) as raised:
                    api.create(pod("rs", generate=True))
                raised.value.when_answered(event.set)
            await asyncio.gather(*(event.wait() for event in answered))
            names = [api.create(pod("rs", generate=True)).metadata.name or "" for _ in answered]
        finally:
            RETRYABLE_WRITES.reset(token)
        return names

    names = asyncio.run(main())
    waits.close()
    assert len(set(names)) == 2
    assert writes.posted == 2 == len(caller.calls)
    assert sorted(request["object"]["metadata"]["name"] for _, request, _ in caller.calls) == (
        sorted(names)
    )
    assert api.store.count("pods") == 2


def test_callers_that_do_not_opt_in_call_in_place() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    writes, waits = deferring(api)

    async def main() -> str:
        return api.create(pod()).metadata.name or ""  # the scheduler, a kubelet...

    assert asyncio.run(main()) == "web"
    waits.close()
    assert writes.posted == 0
    assert caller.paths() == ["/v"]


class _Pending(Controller):
    """A controller whose write waits on a webhook once."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(_service(ThreadedCaller({})), clock=clock, rng=random.Random(1))
        self.answer: Callable[[], None] | None = None
        self.reconciled: list[str] = []
        self.retryable: list[bool] = []

    def reconcile(self, key: str) -> None:
        self.reconciled.append(key)
        self.retryable.append(RETRYABLE_WRITES.get())
        if self.answer is None:
            raise WritePendingError(
                "1 admission webhook call(s) pending", retry_after=11.0, when_answered=self._keep
            )

    def _keep(self, listener: Callable[[], None]) -> None:
        self.answer = listener


def test_a_controller_requeues_a_pending_key_when_its_answers_are_in() -> None:
    clock = ManualClock()
    controller = _Pending(clock)
    controller.queue.add("default/web")
    assert controller.run_once() == 1
    # Not a failure: no backoff counted; back at the latest after retry_after...
    assert controller.queue.num_requeues("default/web") == 0
    assert controller.next_wakeup() == clock.now() + 11.0
    assert controller.answer is not None
    # ...and at once when the answers are in.
    controller.answer()
    assert controller.next_wakeup() == clock.now()
    assert controller.run_once() == 1
    assert controller.reconciled == ["default/web", "default/web"]
    assert controller.retryable == [True, True]
    assert not RETRYABLE_WRITES.get()


def test_a_retry_with_a_newer_input_completes_the_first_write() -> None:
    """An update's retry is the write the blocked call would have completed upstream: a
    newer input (a fresher timestamp) does not ask the webhook again, which would never
    catch up; the next sync writes the newer state."""
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v", resource="configmaps")])
    cm = from_dict(ConfigMap, {"metadata": {"name": "c", "namespace": "default"}})
    stored = api.create(cm)  # in place: nobody opted in
    writes, waits = deferring(api)

    def version(n: int) -> Callable[[], ConfigMap]:
        return lambda: api.update(evolve(stored, data={"at": str(n)}))

    async def main() -> list[str]:
        token = RETRYABLE_WRITES.set(True)
        try:
            with pytest.raises(WritePendingError) as raised:
                version(1)()
            answered = asyncio.Event()
            raised.value.when_answered(answered.set)
            await answered.wait()
            first = version(2)()  # the retry, built a little later
        finally:
            RETRYABLE_WRITES.reset(token)
        return [(first.data or {})["at"]]

    assert asyncio.run(main()) == ["1"]
    waits.close()
    assert [request["object"]["data"] for _, request, _ in caller.calls[1:]] == [{"at": "1"}]
    assert writes.posted == 1
    assert not writes._writes
