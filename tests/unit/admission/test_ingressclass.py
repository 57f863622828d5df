"""The DefaultIngressClass admission plugin through the API service with the default
chain: upstream v1.32 ``plugin/pkg/admission/network/defaultingressclass/admission.go``
(``Admit``: create only, no subresources, an explicit ``ingressClassName`` or the
``kubernetes.io/ingress.class`` annotation is kept; ``getDefaultClass``: the newest
default class, equal creation times by the smaller name)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission import plugins
from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.defaults import default_chain
from kubeprio.admission.ingressclass import DefaultIngressClassPlugin
from kubeprio.api import serialization
from kubeprio.api.ingress import Ingress, IngressClass, default_class
from kubeprio.api.model import evolve
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import admission_request, stored_listers
from tests.conftest import ManualClock


@pytest.fixture
def admitted(store: MemoryStore, clock: ManualClock) -> ApiService:
    """An API service with kube-apiserver's default admission plugins."""
    return ApiService(
        store, clock=clock, rng=random.Random(1), admission=default_chain(StoreListers(store))
    )


def ingress_class(name: str, default: str | None, created: str = "") -> IngressClass:
    annotations = (
        {} if default is None else {"ingressclass.kubernetes.io/is-default-class": default}
    )
    metadata: dict[str, Any] = {"name": name, "annotations": annotations}
    if created:
        metadata["creationTimestamp"] = created
    return serialization.from_dict(
        IngressClass, {"metadata": metadata, "spec": {"controller": "example.com/" + name}}
    )


def ingress(spec: dict[str, Any] | None = None, **metadata: Any) -> Ingress:
    body = {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}, **(spec or {})}
    return serialization.from_dict(
        Ingress, {"metadata": {"name": "web", "namespace": "default", **metadata}, "spec": body}
    )


def test_the_plugin_is_on_by_default_and_implemented() -> None:
    assert "DefaultIngressClass" in plugins.DEFAULT_ON
    assert "DefaultIngressClass" in plugins.IMPLEMENTED
    assert "DefaultIngressClass" in plugins.DEFAULT.running()


@pytest.mark.parametrize(
    ("classes", "spec", "annotations", "expected"),
    [
        ([("nginx", None)], {}, {}, None),
        ([("nginx", "True")], {}, {}, None),
        ([("nginx", None), ("traefik", "true")], {}, {}, "traefik"),
        ([("traefik", "true")], {"ingressClassName": "nginx"}, {}, "nginx"),
        ([("traefik", "true")], {}, {"kubernetes.io/ingress.class": "nginx"}, None),
        ([("a", "true"), ("b", "true")], {}, {}, "b"),
    ],
    ids=["no-default", "not-exactly-true", "default", "explicit-kept", "annotation-kept",
         "newest-default-wins"],
)  # fmt: skip
def test_a_new_ingress_without_a_class_gets_the_default(
    admitted: ApiService,
    clock: ManualClock,
    classes: list[tuple[str, str | None]],
    spec: dict[str, Any],
    annotations: dict[str, str],
    expected: str | None,
) -> None:
    for name, default in classes:
        admitted.create(ingress_class(name, default))
        clock.advance(1)
    created = admitted.create(ingress(spec, annotations=annotations))
    assert created.spec is not None
    assert created.spec.ingress_class_name == expected


def test_equal_creation_times_pick_the_smaller_name() -> None:
    """getDefaultClass's sort: same UnixNano, then by name."""
    same = "2026-01-01T00:00:00Z"
    chosen = default_class(
        [ingress_class("zeta", "true", same), ingress_class("alpha", "true", same),
         ingress_class("old", "true", "2025-01-01T00:00:00Z")]
    )  # fmt: skip
    assert chosen is not None
    assert chosen.metadata.name == "alpha"


def test_updates_and_the_status_subresource_are_not_defaulted(
    admitted: ApiService, clock: ManualClock
) -> None:
    """The handler answers admission.Create only: an Ingress created before the default
    class keeps no class through later updates."""
    created = admitted.create(ingress())
    admitted.create(ingress_class("nginx", "true"))
    relabelled = admitted.update(
        evolve(created, metadata=evolve(created.metadata, labels={"a": "b"}))
    )
    assert relabelled.spec is not None
    assert relabelled.spec.ingress_class_name is None
    _store, listers = stored_listers(ingress_class("nginx", "true"))
    plugin = DefaultIngressClassPlugin(listers)
    request = admission_request(created, operation="UPDATE", old=created, subresource="status")
    assert plugin.admit(request, AdmissionOutcome()) is created


def test_disabling_the_plugin_leaves_ingresses_classless(
    store: MemoryStore, clock: ManualClock
) -> None:
    enabled = plugins.resolve(disable=["DefaultIngressClass"])
    api = ApiService(
        store,
        clock=clock,
        rng=random.Random(1),
        admission=default_chain(StoreListers(store), enabled=enabled),
    )
    api.create(ingress_class("nginx", "true"))
    created = api.create(ingress())
    assert created.spec is not None
    assert created.spec.ingress_class_name is None
