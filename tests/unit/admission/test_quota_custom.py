"""ResourceQuota object counts of custom resources.

Upstream rules checked: the quota controller counts every discovered resource with the
generic object count evaluator (``staging/src/k8s.io/apiserver/pkg/quota/v1/generic``:
``count/<plural>.<group>``, no scopes, so a scoped quota counts 0) and replenishes
after a delete (``resource_quota_monitor.go``); names no served resource matches stay
out of ``status.used``. ``apiserver.customquota`` counts a served custom resource's
stored objects in a namespace.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from kubeprio.api.apiextensions import CustomObject, CustomResourceDefinition
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.customquota import CustomResourceCounts
from kubeprio.apiserver.customresources import CustomResourceRegistry
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.resourcequota import ResourceQuotaController
from kubeprio.store.interface import ObjectKey
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver

NS = "team-a"
WIDGETS = "count/widgets.example.com"


class FixedCounts:
    """A ``CustomObjectCounts`` over a dict: (namespace, name) -> count."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}
        self.listeners: list[Callable[[str, str], None]] = []

    def count(self, namespace: str, name: str) -> int | None:
        return self.counts.get((namespace, name))

    def subscribe(self, listener: Callable[[str, str], None]) -> None:
        self.listeners.append(listener)

    def delete(self, namespace: str, name: str) -> None:
        self.counts[(namespace, name)] -= 1
        for listener in self.listeners:
            listener(namespace, name)


def _world() -> tuple[ApiService, FixedCounts, Driver]:
    clock = ManualClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(0))
    api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
    pods: Informer[Any] = Informer(api, Pod)
    quotas: Informer[ResourceQuota] = Informer(api, ResourceQuota)
    controller = ResourceQuotaController(
        api, clock=clock, rng=random.Random(0), pods=pods, quotas=quotas
    )
    counts = FixedCounts()
    controller.count_custom(counts)
    return api, counts, Driver(clock, [pods, quotas], [controller])


def _used(api: ApiService, name: str) -> dict[str, str]:
    stored = api.get(ResourceQuota, name, NS)
    return {k: str(v) for k, v in ((stored.status or ResourceQuotaStatus()).used or {}).items()}


def _quota(api: ApiService, name: str, hard: dict[str, str], **spec: Any) -> None:
    parsed = {key: parse_quantity(value) for key, value in hard.items()}
    api.create_object(
        ResourceQuota(
            metadata=ObjectMeta(name=name, namespace=NS),
            spec=ResourceQuotaSpec(hard=parsed, **spec),
        )
    )


def test_the_controller_counts_custom_resources_and_replenishes_after_a_delete() -> None:
    api, counts, driver = _world()
    counts.counts[(NS, WIDGETS)] = 2
    _quota(api, "q", {WIDGETS: "5", "count/gadgets.example.com": "1"})
    _quota(api, "scoped", {WIDGETS: "5"}, scopes=("BestEffort",))
    driver.settle()
    # A name no served resource matches is left out, as upstream leaves untracked names.
    assert _used(api, "q") == {WIDGETS: "2"}
    # The generic evaluator matches no scope: a scoped quota tracks the name at 0.
    assert _used(api, "scoped") == {WIDGETS: "0"}
    counts.delete(NS, WIDGETS)
    driver.settle()
    assert _used(api, "q") == {WIDGETS: "1"}


CRD = {
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [{"name": "v1", "served": True, "storage": True}],
    },
    "status": {"conditions": [{"type": "Established", "status": "True"}]},
}


def test_custom_resource_counts_read_the_store_of_a_served_resource() -> None:
    store = MemoryStore()
    store.create(
        ObjectKey("customresourcedefinitions", "", "widgets.example.com"),
        from_dict(CustomResourceDefinition, CRD),
    )
    for namespace, name in ((NS, "a"), (NS, "b"), ("other", "c")):
        store.create(
            ObjectKey("widgets.example.com", namespace, name),
            CustomObject(metadata=ObjectMeta(name=name, namespace=namespace)),
        )
    registry = CustomResourceRegistry(store)
    counts = CustomResourceCounts(registry, store)
    assert counts.count(NS, WIDGETS) == 2
    assert counts.count("empty", WIDGETS) == 0
    assert counts.count(NS, "count/gadgets.example.com") is None
    assert counts.count(NS, "count/configmaps") is None
    heard: list[tuple[str, str]] = []
    counts.subscribe(lambda namespace, name: heard.append((namespace, name)))
    [widgets] = registry.versions_of("example.com", "widgets")
    counts.deleted(widgets.info, NS)
    assert heard == [(NS, WIDGETS)]
