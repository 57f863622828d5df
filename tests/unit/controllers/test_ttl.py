"""The TTL controller writes ``node.alpha.kubernetes.io/ttl`` as ``ttl_controller.go`` does.

Upstream rules checked (``pkg/controller/ttl/ttl_controller.go``): ``ttlBoundaries``
(0 s up to 100 nodes, 15 s past 100, back to 0 s only below 90), ``addNode`` /
``deleteNode`` moving the step, ``updateNodeIfNeeded`` writing only a differing value and
keeping the Node's other annotations, and restoring a value a user changed.
"""

from __future__ import annotations

import dataclasses
import random
from typing import cast

import pytest

from kubeprio.api.core import Node
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client, PatchType
from kubeprio.controllers.ttl import TTL_ANNOTATION, TtlController
from tests.builders import node
from tests.conftest import ManualClock
from tests.driving import Driver


@pytest.fixture
def driven(api: ApiService, clock: ManualClock) -> tuple[Driver, TtlController]:
    nodes = Informer(api, Node)
    driver = Driver(clock, [nodes])
    controller = TtlController(api, clock=clock, rng=random.Random(1), nodes=nodes)
    driver.add(controller)
    return driver, controller


def _ttls(api: ApiService) -> set[str | None]:
    return {n.metadata.annotation(TTL_ANNOTATION) for n in api.list(Node).items}


def test_small_cluster_nodes_get_ttl_zero_and_keep_their_annotations(
    api: ApiService, driven: tuple[Driver, TtlController]
) -> None:
    driver, _ = driven
    built = node("n1").build()
    api.create(dataclasses.replace(built, metadata=ObjectMeta(name="n1", annotations={"a": "b"})))
    driver.settle()
    assert api.get(Node, "n1").metadata.annotations == {"a": "b", TTL_ANNOTATION: "0"}
    # A user's edit is put back, as the next sync of the Node does upstream.
    current = api.get(Node, "n1")
    edited = {**(current.metadata.annotations or {}), TTL_ANNOTATION: "7"}
    api.update(
        dataclasses.replace(
            current, metadata=dataclasses.replace(current.metadata, annotations=edited)
        )
    )
    driver.settle()
    assert api.get(Node, "n1").metadata.annotation(TTL_ANNOTATION) == "0"


def test_step_follows_cluster_size_with_overlap_ttlBoundaries(
    api: ApiService, driven: tuple[Driver, TtlController]
) -> None:
    driver, controller = driven
    for i in range(101):
        api.create(node(f"n{i}").build())
    driver.settle()
    assert controller.desired_ttl_seconds == 15
    assert _ttls(api) == {"15"}
    # Back to 90 nodes, not under 90: still the 15 s step (no flapping at the boundary).
    for i in range(11):
        api.delete(Node, f"n{i}")
    driver.settle()
    assert _ttls(api) == {"15"}
    api.delete(Node, "n11")
    driver.settle()
    assert controller.desired_ttl_seconds == 0
    assert _ttls(api) == {"0"}


class _LabelledMeanwhile:
    """The API; before each Node patch, ``kubectl label node`` writes the same Node (a
    PUT at its latest version), so a write carrying the controller's version would be a
    409. Records the patches."""

    def __init__(self, api: ApiService) -> None:
        self.api = api
        self.patches: list[tuple[object, dict[str, object]]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.api, name)

    def patch(self, kind: type[Node], name: str, patch: object, **options: object) -> Node:
        current = self.api.get(Node, name)
        labels = {**(current.metadata.labels or {}), "team": "blue"}
        self.api.update(
            dataclasses.replace(
                current, metadata=dataclasses.replace(current.metadata, labels=labels)
            )
        )
        self.patches.append((patch, options))
        return self.api.patch(kind, name, patch, **options)  # type: ignore[arg-type]


def test_the_annotation_is_a_strategic_patch_that_never_conflicts(
    api: ApiService, clock: ManualClock
) -> None:
    """``patchNodeWithAnnotation``: ``CreateTwoWayMergePatch`` of the Node before and
    after ``setIntAnnotation``, sent as a strategic merge patch of the Node."""
    nodes = Informer(api, Node)
    client = _LabelledMeanwhile(api)
    controller = TtlController(cast(Client, client), clock=clock, rng=random.Random(1), nodes=nodes)
    driver = Driver(clock, [nodes])
    driver.add(controller)
    api.create(node("n1").build())
    driver.settle()
    assert client.patches == [
        (
            {"metadata": {"annotations": {TTL_ANNOTATION: "0"}}},
            {"patch_type": PatchType.STRATEGIC_MERGE_PATCH},
        )
    ]
    current = api.get(Node, "n1")
    assert current.metadata.annotation(TTL_ANNOTATION) == "0"
    assert (current.metadata.labels or {})["team"] == "blue"
