"""A handler that raises keeps no event from the cache, from the other handlers, or from
the next pump; its failure comes out of ``pump`` after the batch.

Upstream client-go ``tools/cache/shared_informer.go``: ``sharedIndexInformer.HandleDeltas``
updates the indexer before it distributes the notification, and each handler is a
``processorListener`` with its own buffer and goroutine, so one handler's failure
neither loses an event for the cache nor keeps it from the other listeners. kubeprio's
informer used to let the exception leave ``pump`` in the middle of a batch: the rest of
the batch (already taken from the watch) reached neither the cache nor any handler.

The drivers' rules are checked too: ``sim.engine`` aborts the run (a report built on a
component's bug is wrong) once the events are applied; ``serve.driver`` logs the failure
with its traceback and keeps the round going.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import EventHandlerErrors, FuncHandler, Informer
from kubeprio.client.informergroup import InformerGroup
from kubeprio.clock import RealClock
from kubeprio.serve.driver import RealTimeDriver
from kubeprio.sim.engine import Engine, SimClock, SimulationError
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock

NAMES = ("a", "b", "c")


def _api() -> ApiService:
    return ApiService(
        MemoryStore(), clock=ManualClock(), rng=random.Random(3), admission=AdmissionChain()
    )


class Seen:
    """Handlers that log every call; ``fail_at`` makes the n-th call (1-based) raise."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.log: list[tuple[str, str]] = []
        self.fail_at = fail_at

    def _note(self, event: str, obj: ApiObject) -> None:
        self.log.append((event, obj.metadata.name or ""))
        if len(self.log) == self.fail_at:
            raise ValueError(f"handler bug on {obj.metadata.name}")

    def handler(self) -> FuncHandler[Any]:
        return FuncHandler(
            lambda obj: self._note("add", obj),
            lambda _old, new: self._note("update", new),
            lambda obj: self._note("delete", obj),
        )


def _config_map(name: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="default"))


def _labelled(api: ApiService, name: str) -> None:
    current = api.get(ConfigMap, name, "default")
    metadata = dataclasses.replace(current.metadata, labels={"touched": "yes"})
    api.update(dataclasses.replace(current, metadata=metadata))


@dataclasses.dataclass(frozen=True)
class Case:
    """Three events reach the informer at the pump (or start) ``deliver`` makes.

    ConfigMaps: a deletion is one event (a pod's graceful deletion is an update first)."""

    event: str
    before_start: Callable[[ApiService], None]
    after_start: Callable[[ApiService, Informer[ConfigMap]], None]
    deliver: Callable[[Informer[ConfigMap]], None]
    cached: tuple[str, ...]


def _create_all(api: ApiService) -> None:
    for name in NAMES:
        api.create(_config_map(name))


def _create_pods(api: ApiService) -> None:
    for name in NAMES:
        api.create(pod(name).build())


def _nothing(*_args: object) -> None:
    return None


def _update_all(api: ApiService, _informer: Informer[ConfigMap]) -> None:
    for name in NAMES:
        _labelled(api, name)


def _delete_all(api: ApiService, _informer: Informer[ConfigMap]) -> None:
    for name in NAMES:
        api.delete(ConfigMap, name, "default")


def _create_after(api: ApiService, _informer: Informer[ConfigMap]) -> None:
    _create_all(api)


def _create_behind_a_closed_watch(api: ApiService, informer: Informer[ConfigMap]) -> None:
    """The watch ends with nothing in it; the objects are only seen by the relist."""
    informer.stop()
    informer.pump()  # drains the closed watch (nothing), relists (nothing yet)
    informer.stop()
    _create_all(api)


def _pump(informer: Informer[ConfigMap]) -> None:
    informer.pump()


def _start(informer: Informer[ConfigMap]) -> None:
    informer.start()


CASES = [
    Case("add", _nothing, _create_after, _pump, NAMES),
    Case("update", _create_all, _update_all, _pump, NAMES),
    Case("delete", _create_all, _delete_all, _pump, ()),
    # A relist reports what it found as adds (``Informer._relist``).
    Case("add", _nothing, _create_behind_a_closed_watch, _pump, NAMES),
    # The initial list: ``start`` delivers the adds and raises after them.
    Case("add", _create_all, _nothing, _start, NAMES),
]


@pytest.mark.parametrize("case", CASES, ids=["add", "update", "delete", "relist", "start"])
def test_a_handler_failing_on_the_second_of_three_events_keeps_none_from_anyone(
    case: Case,
) -> None:
    api = _api()
    case.before_start(api)
    informer: Informer[ConfigMap] = Informer(api, ConfigMap)
    before, failing, after = Seen(), Seen(), Seen()
    informer.add_handler(before.handler())
    informer.add_handler(failing.handler())
    informer.add_handler(after.handler())
    if case.deliver is not _start:
        informer.start()
        for seen in (before, failing, after):
            seen.log.clear()
    failing.fail_at = 2
    case.after_start(api, informer)

    with pytest.raises(EventHandlerErrors) as raised:
        case.deliver(informer)

    expected = [(case.event, name) for name in NAMES]
    assert [p.metadata.name for p in informer.list()] == list(case.cached)
    # The handlers before and after the failing one saw every event, in order; so did
    # the failing one (its second call raised, its third still came).
    assert before.log == expected
    assert after.log == expected
    assert failing.log == expected
    (failure,) = raised.value.exceptions
    assert isinstance(failure, ValueError)
    assert str(failure) == "handler bug on b"
    assert failure.__notes__ == [f"in an on_{case.event} handler of the ConfigMap informer"]
    assert "1 event handler call failed in the ConfigMap informer" in str(raised.value)

    # The next pump works, and the failing handler is still registered.
    api.create(_config_map("d"))
    assert informer.pump() == 1
    assert informer.get("d", "default") is not None
    assert failing.log[-1] == after.log[-1] == ("add", "d")


def test_every_failure_of_a_batch_is_raised_together_in_order() -> None:
    api = _api()
    informer: Informer[Pod] = Informer(api, Pod)
    informer.add_handler(FuncHandler(on_add=lambda obj: _raise(KeyError(obj.metadata.name))))
    informer.add_handler(FuncHandler(on_add=lambda obj: _raise(ValueError(obj.metadata.name))))
    informer.start()
    _create_pods(api)
    with pytest.raises(EventHandlerErrors) as raised:
        informer.pump()
    assert [(type(e).__name__, e.args[0]) for e in raised.value.exceptions] == [
        (kind, name) for name in NAMES for kind in ("KeyError", "ValueError")
    ]
    assert "6 event handler calls failed in the Pod informer" in str(raised.value)
    assert informer.pump() == 0  # nothing left over from the failed batch


def _raise(exc: Exception) -> None:
    raise exc


def test_a_group_pumps_the_informers_after_the_failing_one_and_raises_after_them() -> None:
    """``InformerGroup.pump``: the ConfigMap informer after the failing Pod informer
    still gets its events in the same pass."""
    api = _api()
    pods: Informer[Pod] = Informer(api, Pod)
    maps: Informer[ConfigMap] = Informer(api, ConfigMap)
    pod_seen, map_seen = Seen(fail_at=1), Seen()
    pods.add_handler(pod_seen.handler())
    maps.add_handler(map_seen.handler())
    group = InformerGroup([pods, maps])
    group.start()
    api.create(pod("a").build())
    api.create(ConfigMap(metadata=ObjectMeta(name="m", namespace="default")))
    with pytest.raises(EventHandlerErrors, match="Pod informer"):
        group.pump()
    assert pods.get("a", "default") is not None
    assert map_seen.log == [("add", "m")]
    api.create(pod("b").build())
    assert group.pump() == 1
    assert pod_seen.log == [("add", "a"), ("add", "b")]


class _PodComponent:
    """A ``Driven`` whose only work is its informer's events."""

    def __init__(self, informer: Informer[Pod]) -> None:
        self.informer = informer
        self.runs = 0

    def pump(self) -> int:
        return self.informer.pump()

    def run_once(self) -> bool:
        self.runs += 1
        return False

    def next_wakeup(self) -> float | None:
        return None


def _watched(api: ApiService) -> tuple[Informer[Pod], Seen, Seen]:
    informer: Informer[Pod] = Informer(api, Pod)
    failing, other = Seen(fail_at=2), Seen()
    informer.add_handler(failing.handler())
    informer.add_handler(other.handler())
    informer.start()
    return informer, failing, other


def test_the_simulation_aborts_after_the_events_were_applied() -> None:
    api = _api()
    informer, _failing, other = _watched(api)
    engine = Engine(SimClock(), [_PodComponent(informer)], seed=5)
    engine.schedule(3, lambda: _create_pods(api))
    with pytest.raises(SimulationError, match=r"t=3s .*seed 5.*handler bug on b"):
        engine.run()
    assert [p.metadata.name for p in informer.list()] == list(NAMES)
    assert other.log == [("add", name) for name in NAMES]


def test_serve_logs_the_failure_with_its_traceback_and_keeps_the_round_going(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = _api()
    informer, _failing, other = _watched(api)
    failing_component, next_component = _PodComponent(informer), _PodComponent(informer)
    driver = RealTimeDriver([failing_component, next_component], clock=RealClock(), store=api.store)
    _create_pods(api)
    with caplog.at_level(logging.ERROR, logger="kubeprio.serve"):
        asyncio.run(driver.settle())
    assert driver.errors == 1
    (record,) = caplog.records
    assert record.getMessage() == "event handlers failed in _PodComponent"
    assert record.exc_info is not None
    assert "handler bug on b" in caplog.text
    assert "Traceback" in caplog.text
    # The same round ran the components (no abort, no pause).
    assert failing_component.runs >= 1
    assert next_component.runs >= 1
    assert other.log == [("add", name) for name in NAMES]
