"""The components outside ``controllers.base`` whose writes wait on admission webhooks
without holding the loop (``client.answeredretry``, the event recorder's backlog, the
scheduler's parked bind), with webhooks answered in process on the worker threads.

Each test checks the three properties of the brief on one component: nothing blocks
(the component's call returns at once, nothing written), each webhook is called once
per review, and the write is done exactly once after the answer. Upstream, each of these
is a goroutine (or a worker) whose API call blocks until the webhook answers:
``schedule_one.go`` ``bindingCycle``, ``preemption.go`` ``prepareCandidate``,
``tools/record`` ``StartRecordingToSink``, ``gc_controller.go``, ``taint_eviction.go``,
``disruption.go`` ``syncStalePodDisruption``.

Also the admission of ``pods/binding`` itself (``pkg/registry/core/pod/storage/storage.go``
``BindingREST.Create`` runs ``createValidation`` on the Binding).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.core import Binding, Event, Node, ObjectMeta, ObjectReference, Pod, PodStatus
from kubeprio.apiserver.controllerwebhooks import ControllerWebhookWrites
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.webhookwaits import WebhookWaits
from kubeprio.client import record
from kubeprio.client.informer import Informer
from kubeprio.controllers.podgc import PodGCController
from kubeprio.controllers.tainteviction import TaintEvictionController
from kubeprio.scheduler.executor import ClientExecutor
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.preemption import Candidate, Victims
from kubeprio.scheduler.setup import new_scheduler
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.driving import Driver
from tests.unit.apiserver.test_webhookwaits import (
    ThreadedCaller,
    _register,
    _service,
    allow,
    deferring,
    deny,
)


def rule_hook(
    name: str, path: str, resource: str, *operations: str, group: str = ""
) -> dict[str, Any]:
    resources = [resource] if group == "" else [resource, f"{resource}/*"]
    return {
        "name": name,
        "clientConfig": {"url": f"https://hooks.example.com{path}"},
        "rules": [
            {
                "operations": list(operations),
                "apiGroups": [group],
                "apiVersions": ["v1"],
                "resources": resources,
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }


@dataclasses.dataclass
class Served:
    api: ApiService
    caller: ThreadedCaller
    writes: ControllerWebhookWrites
    waits: WebhookWaits


def served(handlers: dict[str, Any], *hooks: dict[str, Any]) -> Served:
    """An API service whose in-process writes wait on these validating webhooks off the
    loop, as ``kubeprio serve`` wires it (``serve.server``)."""
    caller = ThreadedCaller(handlers)
    api = _service(caller)
    _register(api, [], list(hooks))
    writes, waits = deferring(api)
    return Served(api, caller, writes, waits)


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the loop run (the answers arrive on it) until ``condition`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


def stored_pod(api: ApiService, name: str, **status: Any) -> Pod:
    created = api.create(pod(name).build())
    return api.update_status(
        dataclasses.replace(created, status=dataclasses.replace(PodStatus(), **status))
    )


# --- pods/binding admission ------------------------------------------------------------------


def test_a_binding_is_admitted_as_a_create_of_pods_binding() -> None:
    """``BindingREST.Create``: webhooks naming ``pods/binding`` see the Binding (kind
    Binding, resource pods, subresource binding) and may refuse it; the pod stays
    unbound."""
    caller = ThreadedCaller({"/b": deny("no binding today")})
    api = _service(caller)
    _register(api, [], [rule_hook("b.example.com", "/b", "pods/binding", "CREATE")])
    api.create(node("n1").build())
    web = api.create(pod("web").build())
    binding = Binding(
        metadata=ObjectMeta(namespace="default", name="web", uid=web.metadata.uid),
        target=ObjectReference(kind="Node", name="n1"),
    )
    with pytest.raises(errors.StatusError) as refused:
        api.bind(binding)
    assert refused.value.message == (
        'admission webhook "b.example.com" denied the request: no binding today'
    )
    [(_, request, _)] = caller.calls
    assert request["operation"] == "CREATE"
    assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert request["subResource"] == "binding"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "Binding"}
    assert request["object"]["target"] == {"kind": "Node", "name": "n1"}
    assert not api.get(Pod, "web", "default").spec.node_name


# --- the scheduler ----------------------------------------------------------------------------


def test_a_bind_waiting_on_its_webhook_keeps_the_pod_assumed_and_binds_it_once() -> None:
    """Upstream's binding goroutine waits on the bind with the pod assumed; here the
    binding cycle parks (``WaitingBind.bind_pending``) and binds once answered: one
    webhook call, one bind, no failure, no requeue."""
    env = served({"/b": allow()}, rule_hook("b.example.com", "/b", "pods/binding", "CREATE"))
    api = env.api
    api.create(node("n1").allocatable(cpu="4", memory="4Gi", pods="10").build())
    api.create(pod("web").requests(cpu="1").build())
    clock = api.clock
    assert isinstance(clock, ManualClock)
    scheduler = new_scheduler(api, clock=clock, rng=random.Random(1))
    scheduler.start()

    def settle() -> None:
        scheduler.pump()
        while scheduler.run_once():
            scheduler.pump()

    env.caller.release.clear()  # the webhook thinks until released

    async def main() -> None:
        settle()  # returns: nothing waits in place
        assert scheduler.waiting_binds == 1
        assert not api.get(Pod, "web", "default").spec.node_name
        assert scheduler.cache.node_info("n1").requested.get("cpu") == 1000  # still assumed
        settle()  # a scheduler round while the webhook thinks posts nothing again
        env.caller.release.set()
        await until(lambda: (w := scheduler.next_wakeup()) is not None and w <= clock.now())
        settle()

    asyncio.run(main())
    env.waits.close()
    assert api.get(Pod, "web", "default").spec.node_name == "n1"
    assert env.caller.paths() == ["/b"]
    assert env.writes.posted == 1
    assert scheduler.waiting_binds == 0
    assert scheduler.scheduled == 1
    assert scheduler.failed_attempts == 0


def test_a_preemption_waiting_on_its_webhook_goes_on_and_evicts_once_answered() -> None:
    """``prepareCandidate``'s victim calls (the DisruptionTarget status write, the
    delete): one waiting on a webhook does not fail the preemption nor hold the
    scheduler; the victim is marked and deleted once the answer is in, once."""
    env = served({"/s": allow()}, rule_hook("s.example.com", "/s", "pods/status", "UPDATE"))
    api = env.api
    victim = api.create(pod("victim").on("n1").build())
    preemptor = api.create(pod("vip").build())
    clock = api.clock
    recorder = record.EventRecorder(api, clock=clock, component="default-scheduler")
    executor = ClientExecutor(api, clock, lambda _node: (), recorder)
    candidate = Candidate("n1", Victims((PodInfo.of(victim),), 0))
    env.caller.release.clear()

    async def main() -> None:
        assert executor.prepare_candidate(candidate, PodInfo.of(preemptor)) is None
        assert api.get(Pod, "victim", "default").metadata.deletion_timestamp is None
        # Chosen again while it waits: not started twice.
        assert executor.prepare_candidate(candidate, PodInfo.of(preemptor)) is None
        env.caller.release.set()
        await until(lambda: api.list(Event).items != [])

    asyncio.run(main())
    env.waits.close()
    # Deleted gracefully (a kubelet would finish it): marked, with its condition.
    gone = api.get(Pod, "victim", "default")
    assert gone.metadata.deletion_timestamp is not None
    assert [c.type for c in gone.status.conditions or ()] == ["DisruptionTarget"]
    assert env.caller.paths() == ["/s"]
    [(_, request, _)] = env.caller.calls
    conditions = request["object"]["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["DisruptionTarget"]
    assert [e.reason for e in api.list(Event).items] == ["Preempted"]


# --- events -----------------------------------------------------------------------------------


def test_events_behind_a_pending_event_write_wait_and_are_written_in_order() -> None:
    """client-go's sink writes a broadcaster's events one after the other: a slow write
    holds back the later ones, which are then written in the order they happened."""
    env = served({"/e": allow()}, rule_hook("e.example.com", "/e", "events", "CREATE"))
    api = env.api
    recorder = record.EventRecorder(api, clock=api.clock, component="kubelet")
    web = api.create(pod("web").build())

    async def main() -> None:
        for reason in ("First", "Second", "Third"):
            assert recorder.event(web, record.EVENT_TYPE_NORMAL, reason, reason.lower()) is None
        assert recorder.backlog == 3
        assert api.store.count("events") == 0
        await until(lambda: recorder.backlog == 0)

    asyncio.run(main())
    env.waits.close()
    events = sorted(api.list(Event).items, key=lambda e: int(e.metadata.resource_version or 0))
    assert [e.reason for e in events] == ["First", "Second", "Third"]
    assert env.caller.paths() == ["/e", "/e", "/e"]  # once per event's review
    assert env.writes.posted == 3


def test_events_beyond_the_queue_length_are_dropped() -> None:
    """``maxQueuedEvents`` (1000) with ``watch.DropIfChannelFull``."""
    env = served({"/e": allow()}, rule_hook("e.example.com", "/e", "events", "CREATE"))
    recorder = record.EventRecorder(env.api, clock=env.api.clock, component="kubelet")
    web = env.api.create(pod("web").build())
    env.caller.release.clear()

    async def main() -> None:
        for n in range(record.MAX_QUEUED_EVENTS + 2):
            recorder.event(web, record.EVENT_TYPE_NORMAL, "Tick", f"tick {n}")

    asyncio.run(main())
    env.caller.release.set()
    env.waits.close()
    assert recorder.backlog == record.MAX_QUEUED_EVENTS
    assert recorder.dropped == 2


# --- controllers with their own queues --------------------------------------------------------


def test_the_pod_gc_deletes_a_pod_once_its_delete_webhook_answered() -> None:
    """``gcTerminated`` deletes in goroutines that wait on their calls: the check goes
    on, a later check leaves the waiting pod alone, the pod is deleted once."""
    env = served({"/d": allow()}, rule_hook("d.example.com", "/d", "pods", "DELETE"))
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    for name in ("old", "new"):
        stored_pod(api, name, phase="Succeeded")
        clock.advance(1)
    pods, nodes = Informer(api, Pod), Informer(api, Node)
    gc = PodGCController(api, clock=clock, pods=pods, nodes=nodes, terminated_pod_threshold=1)
    pods.start()
    nodes.start()
    env.caller.release.clear()

    async def main() -> None:
        gc.run_once()
        gc.run_once()  # the next check, while the webhook still thinks
        assert gc.deleted == 0
        assert len(gc.api_writes) == 1
        env.caller.release.set()
        await until(lambda: gc.deleted == 1)

    asyncio.run(main())
    env.waits.close()
    assert [p.metadata.name for p in api.list(Pod).items] == ["new"]
    assert env.caller.paths() == ["/d"]
    assert env.writes.posted == 1


def test_the_taint_eviction_deletes_a_pod_once_its_webhook_answered() -> None:
    """``deletePodHandler``: the DisruptionTarget status write waits on its webhook; the
    retry re-reads the pod and deletes it once, with one webhook call."""
    env = served({"/s": allow()}, rule_hook("s.example.com", "/s", "pods/status", "UPDATE"))
    api = env.api
    clock = api.clock
    api.create(node("n1").taint("k", "v", "NoExecute").build())
    api.create(pod("web").on("n1").build())
    pods, nodes = Informer(api, Pod), Informer(api, Node)
    controller = TaintEvictionController(api, clock=clock, pods=pods, nodes=nodes)
    driver = Driver(clock, [pods, nodes], [controller])
    env.caller.release.clear()

    async def main() -> None:
        driver.settle()
        assert controller.deleted == 0
        assert api.get(Pod, "web", "default").metadata.deletion_timestamp is None
        env.caller.release.set()
        await until(lambda: controller.deleted == 1)

    asyncio.run(main())
    env.waits.close()
    evicted = api.get(Pod, "web", "default")  # a graceful delete: a kubelet would finish it
    assert evicted.metadata.deletion_timestamp is not None
    assert [c.type for c in evicted.status.conditions or ()] == ["DisruptionTarget"]
    assert env.caller.paths() == ["/s"]
    assert env.writes.posted == 1
