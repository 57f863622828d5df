"""Writes that wait on admission webhooks off the event loop (``apiserver.webhookwaits``,
``admission.webhookdeferral``), with webhooks answered in process on the worker threads.

The central property is a differential one: a write run through ``WebhookWaits`` (stopped
at each missing answer, replayed once it is in) ends exactly as the same write with every
webhook called in place: the same stored object, the same refusal text, the same
warnings, and each webhook called once per review, in the order upstream's dispatchers
call them (``webhook/mutating/dispatcher.go`` with ``reinvocationPolicy: IfNeeded``, then
``webhook/validating/dispatcher.go``). Also checked: the event loop runs other work while
a call waits; ``timeoutSeconds`` ends a call with ``context deadline exceeded``
(``util/webhook`` ``ErrCallingWebhook``) and ``failurePolicy`` decides; validating
webhooks are called in parallel; an attempt that already wrote calls in place; a replay
after a concurrent write re-runs admission on the new old object, or answers 409 to an
update that named the old resourceVersion (``registry/generic/registry/store.go``
``Update`` inside ``GuaranteedUpdate``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.admission.defaults import WebhookSetup, default_chain
from kubeprio.admission.webhookcall import HttpAnswer, TransportError, WebhookClient, WebhookTarget
from kubeprio.admission.webhookdeferral import ACTIVE_BOOK, MAX_DEFERRALS, AnswerBook
from kubeprio.api import errors
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Pod
from kubeprio.api.model import evolve
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.service import Service
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.controllerwebhooks import ControllerWebhookWrites
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.webhookwaits import WebhookWaits
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class ThreadedCaller:
    """Answers POSTs with a handler per URL path; records each call with its thread."""

    def __init__(self, handlers: dict[str, Handler], delay: float = 0.0) -> None:
        self.handlers = handlers
        self.delay = delay
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.release = threading.Event()
        self.release.set()

    def post(self, target: WebhookTarget, body: bytes, timeout: float) -> HttpAnswer:
        review = json.loads(body)
        path = target.path.partition("?")[0]
        self.calls.append((path, review["request"], threading.current_thread().name))
        self.release.wait(10)
        if self.delay:
            time.sleep(self.delay)
        handler = self.handlers.get(path)
        if handler is None:
            raise TransportError("dial tcp 10.0.0.1:443: connect: connection refused")
        answer = {"apiVersion": review["apiVersion"], "kind": "AdmissionReview"}
        answer["response"] = handler(review["request"])
        return HttpAnswer(200, "application/json", json.dumps(answer).encode())

    def paths(self) -> list[str]:
        return [path for path, _, _ in self.calls]


def _service(caller: ThreadedCaller, seed: int = 7) -> ApiService:
    store = MemoryStore()
    listers = StoreListers(store)
    client = WebhookClient(caller, listers.services, listers.endpoints)
    return ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(seed),
        admission=default_chain(listers, webhooks=WebhookSetup(listers, client)),
    )


def hook(name: str, path: str, resource: str = "pods", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": {"url": f"https://hooks.example.com{path}"},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": [resource],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }


def allow(**extra: Any) -> Handler:
    return lambda request: {"uid": request["uid"], "allowed": True, **extra}


def add_label(key: str) -> Handler:
    def handler(request: dict[str, Any]) -> dict[str, Any]:
        labels = request["object"]["metadata"].get("labels")
        if labels and key in labels:
            return {"uid": request["uid"], "allowed": True}
        ops: list[dict[str, Any]] = (
            [] if labels else [{"op": "add", "path": "/metadata/labels", "value": {}}]
        )
        ops.append({"op": "add", "path": f"/metadata/labels/{key}", "value": "yes"})
        patch = base64.b64encode(json.dumps(ops).encode()).decode()
        return {"uid": request["uid"], "allowed": True, "patchType": "JSONPatch", "patch": patch}

    return handler


def deny(message: str) -> Handler:
    return lambda request: {
        "uid": request["uid"],
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": message},
    }


def pod(name: str = "web", generate: bool = False) -> Pod:
    metadata = {"generateName": f"{name}-"} if generate else {"name": name}
    return from_dict(
        Pod,
        {
            "metadata": {**metadata, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        },
    )


def node_port_service() -> Service:
    return from_dict(
        Service,
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"type": "NodePort", "ports": [{"port": 80}], "selector": {"app": "web"}},
        },
    )


# Each scenario: handlers, mutating hooks, validating hooks, the object to create.
SCENARIOS: dict[str, tuple[dict[str, Handler], list[Any], list[Any], Callable[[], Any]]] = {
    "mutating patches, IfNeeded reinvoked after a later patch": (
        {"/a": add_label("a"), "/b": add_label("b"), "/v": allow(warnings=["checked"])},
        [hook("a.example.com", "/a", reinvocationPolicy="IfNeeded"), hook("b.example.com", "/b")],
        [hook("v.example.com", "/v")],
        pod,
    ),
    "the first refusal in order wins; warnings kept": (
        {"/ok": allow(warnings=["w1"]), "/no1": deny("first"), "/no2": deny("second")},
        [],
        [
            hook("ok.example.com", "/ok"),
            hook("no1.example.com", "/no1"),
            hook("n2.example.com", "/no2"),
        ],
        pod,
    ),
    "failure policies: Ignore skipped, Fail refuses": (
        {"/ok": allow()},
        [hook("down.example.com", "/down", failurePolicy="Ignore")],
        [hook("ok.example.com", "/ok"), hook("fail.example.com", "/gone")],
        pod,
    ),
    "a generateName pod: the validating webhook sees the name it is stored with": (
        {"/a": add_label("a"), "/v": allow()},
        [hook("a.example.com", "/a")],
        [hook("v.example.com", "/v")],
        lambda: pod("batch", generate=True),
    ),
    "a Service: cluster IP and node port drawn once": (
        {"/v": allow()},
        [],
        [hook("v.example.com", "/v", resource="services")],
        node_port_service,
    ),
}


def _register(api: ApiService, mutating: list[Any], validating: list[Any]) -> None:
    if mutating:
        api.create_object(
            from_dict(
                MutatingWebhookConfiguration, {"metadata": {"name": "m"}, "webhooks": mutating}
            )
        )
    if validating:
        api.create_object(
            from_dict(
                ValidatingWebhookConfiguration, {"metadata": {"name": "v"}, "webhooks": validating}
            )
        )


def _outcome(write: Callable[[], Any]) -> tuple[str, Any, tuple[str, ...]]:
    try:
        result = write()
    except errors.StatusError as exc:
        return ("refused", to_dict(exc.status), exc.warnings)
    return ("stored", to_dict(result.obj), result.warnings)


def _without_uids(calls: list[tuple[str, dict[str, Any], str]]) -> list[tuple[str, str]]:
    return [
        (path, json.dumps({**request, "uid": ""}, sort_keys=True)) for path, request, _ in calls
    ]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_deferred_write_ends_as_the_same_write_called_in_place(scenario: str) -> None:
    handlers, mutating, validating, make = SCENARIOS[scenario]
    in_place_caller, deferred_caller = ThreadedCaller(handlers), ThreadedCaller(handlers)
    in_place, deferred = _service(in_place_caller), _service(deferred_caller)
    for api in (in_place, deferred):
        _register(api, mutating, validating)
    waits = WebhookWaits(deferred, generators=(deferred.rng,))
    # The replayed write runs with a stream of its own: give the in-place one the same.
    in_place.rng.setstate(random.Random(in_place.rng.getrandbits(64)).getstate())

    expected = _outcome(lambda: in_place.create_object(make()))
    got = _outcome(lambda: asyncio.run(waits.run(lambda: deferred.create_object(make()))))
    waits.close()

    assert got == expected
    # Each review was posted once, the same reviews in the same order, from worker threads.
    assert _without_uids(deferred_caller.calls) == _without_uids(in_place_caller.calls)
    assert all(thread.startswith("webhook") for _, _, thread in deferred_caller.calls)


def test_the_loop_runs_other_work_while_a_call_waits() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    waits = WebhookWaits(api, generators=(api.rng,))
    caller.release.clear()
    done_meanwhile: list[str] = []

    async def meanwhile() -> None:
        while not caller.calls:
            await asyncio.sleep(0.01)
        # The write is waiting on its webhook: the store is free for others.
        api.create_object(from_dict(ConfigMap, {"metadata": {"name": "c", "namespace": "default"}}))
        done_meanwhile.append("configmap")
        caller.release.set()

    async def main() -> Any:
        write = asyncio.create_task(waits.run(lambda: api.create_object(pod())))
        await meanwhile()
        return await write

    result = asyncio.run(main())
    waits.close()
    assert done_meanwhile == ["configmap"]
    assert result.obj.metadata.name == "web"
    assert caller.paths() == ["/v"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("Ignore", "stored"),
        (
            "Fail",
            'Internal error occurred: failed calling webhook "slow.example.com": failed to '
            'call webhook: Post "https://hooks.example.com/v?timeout=1s": context deadline '
            "exceeded",
        ),
    ],
)
def test_a_call_past_its_timeout_follows_the_failure_policy(policy: str, expected: str) -> None:
    caller = ThreadedCaller({"/v": allow()}, delay=3)
    api = _service(caller)
    _register(api, [], [hook("slow.example.com", "/v", timeoutSeconds=1, failurePolicy=policy)])
    waits = WebhookWaits(api, generators=(api.rng,))
    started = time.monotonic()
    kind, body, _ = _outcome(lambda: asyncio.run(waits.run(lambda: api.create_object(pod()))))
    elapsed = time.monotonic() - started
    waits.close()
    assert 1 <= elapsed < 2.5
    assert (kind if policy == "Ignore" else body["message"]) == expected, body


def test_validating_webhooks_are_called_in_parallel() -> None:
    caller = ThreadedCaller({"/a": allow(), "/b": allow(), "/c": allow()}, delay=0.5)
    api = _service(caller)
    _register(
        api,
        [],
        [hook("a.example.com", "/a"), hook("b.example.com", "/b"), hook("c.example.com", "/c")],
    )
    waits = WebhookWaits(api, generators=(api.rng,))
    started = time.monotonic()
    asyncio.run(waits.run(lambda: api.create_object(pod())))
    waits.close()
    assert time.monotonic() - started < 1.2
    assert sorted(caller.paths()) == ["/a", "/b", "/c"]


def test_an_attempt_that_already_wrote_calls_in_place() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    waits = WebhookWaits(api, generators=(api.rng,))

    def two_writes() -> Any:
        # A request that writes before its admitted write (an eviction updates the
        # budget, then deletes): replaying it would write the first object twice.
        api.create_object(
            from_dict(ConfigMap, {"metadata": {"generateName": "c-", "namespace": "default"}})
        )
        return api.create_object(pod())

    asyncio.run(waits.run(two_writes))
    waits.close()
    assert api.store.count("configmaps") == 1
    [(path, _, thread)] = caller.calls
    assert (path, thread) == ("/v", threading.main_thread().name)


def test_a_book_past_its_rounds_calls_in_place() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    _register(api, [], [hook("v.example.com", "/v")])
    book = AnswerBook(api.store.current_revision)
    book.rounds = MAX_DEFERRALS
    book.begin_attempt()
    token = ACTIVE_BOOK.set(book)
    try:
        api.create_object(pod())
    finally:
        ACTIVE_BOOK.reset(token)
    assert [(path, thread) for path, _, thread in caller.calls] == [
        ("/v", threading.main_thread().name)
    ]


def test_writes_without_webhook_configurations_draw_as_before() -> None:
    caller = ThreadedCaller({})
    plain, waited = _service(caller), _service(caller)
    waits = WebhookWaits(waited, generators=(waited.rng,))
    expected = plain.create_object(pod(generate=True)).obj
    got = asyncio.run(waits.run(lambda: waited.create_object(pod(generate=True)))).obj
    waits.close()
    assert (got.metadata.name, got.metadata.uid) == (expected.metadata.name, expected.metadata.uid)


def _update_racing_a_status_write(
    api: ApiService, caller: ThreadedCaller, *, precondition: bool
) -> Any:
    """Update the pod's labels through ``WebhookWaits`` while, as its webhook thinks,
    another writer changes the pod's status (a subresource the webhook does not match)."""
    waits = WebhookWaits(api, generators=(api.rng,))
    current = api.get(Pod, "web", "default")
    changed = evolve(
        current,
        metadata=evolve(
            current.metadata,
            labels={"tier": "web"},
            resource_version=current.metadata.resource_version if precondition else None,
        ),
    )
    caller.release.clear()

    async def main() -> Any:
        write = asyncio.create_task(waits.run(lambda: api.update_object(changed)))
        while not caller.calls:
            await asyncio.sleep(0.01)
        status = evolve(current, status=evolve(current.status, phase="Running"))
        api.update_object(status, subresource="status")
        caller.release.set()
        return await write

    try:
        return asyncio.run(main())
    finally:
        waits.close()


def test_a_replay_sees_what_changed_meanwhile_and_asks_again() -> None:
    # GuaranteedUpdate re-runs admission when the stored object moved under an update
    # without a resourceVersion: the webhook sees the new old object.
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    api.create_object(pod())
    _register(api, [], [hook("v.example.com", "/v")])
    result = _update_racing_a_status_write(api, caller, precondition=False)
    stored = result.obj
    assert (stored.metadata.labels, stored.status.phase) == ({"tier": "web"}, "Running")
    first, second = (request for _, request, _ in caller.calls)
    assert first["oldObject"]["status"].get("phase") != "Running"
    assert second["oldObject"]["status"]["phase"] == "Running"


def test_a_replay_with_a_stale_resource_version_is_a_conflict() -> None:
    caller = ThreadedCaller({"/v": allow()})
    api = _service(caller)
    api.create_object(pod())
    _register(api, [], [hook("v.example.com", "/v")])
    with pytest.raises(errors.ConflictError) as conflict:
        _update_racing_a_status_write(api, caller, precondition=True)
    assert conflict.value.message == (
        'Operation cannot be fulfilled on pods "web": the object has been modified; please '
        "apply your changes to the latest version and try again"
    )
    assert caller.paths() == ["/v"]


@pytest.mark.parametrize("allowed", [True, False])
def test_a_delete_waits_on_its_webhook_the_same_way(allowed: bool) -> None:
    # Admission on DELETE (apiserver.deleteadmission): the review is posted on a worker
    # thread and the delete replayed with the answer.
    caller = ThreadedCaller({"/d": allow() if allowed else deny("keep it")})
    api = _service(caller)
    api.create_object(pod())
    deleting = hook("d.example.com", "/d")
    deleting["rules"][0]["operations"] = ["DELETE"]
    _register(api, [], [deleting])
    waits = WebhookWaits(api, generators=(api.rng,))
    refusal = ""
    try:
        asyncio.run(waits.run(lambda: api.delete_object(Pod, "web", "default")))
    except errors.StatusError as exc:
        refusal = exc.message
    waits.close()
    [(path, request, thread)] = caller.calls
    assert (path, request["operation"], thread.startswith("webhook")) == ("/d", "DELETE", True)
    assert api.store.count("pods") == (0 if allowed else 1)
    assert refusal == (
        "" if allowed else 'admission webhook "d.example.com" denied the request: keep it'
    )


def deferring(api: ApiService) -> tuple[ControllerWebhookWrites, WebhookWaits]:
    """``api``'s in-process writes wait on their webhooks off the loop, as ``kubeprio
    serve`` wires it (``serve.server``)."""
    waits = WebhookWaits(api, generators=(api.rng,))
    writes = ControllerWebhookWrites(api, waits)
    api.controller_writes = writes
    return writes, waits
