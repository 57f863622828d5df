"""The kubelet writes its Node only through strategic merge PATCHes of ``nodes/status``.

Upstream: ``pkg/kubelet/kubelet_node_status.go`` (``tryRegisterWithAPIServer`` with
``reconcileCMADAnnotationWithExistingNode`` and ``updateDefaultLabels``;
``tryUpdateNodeStatus``) sends every change through ``nodeutil.PatchNodeStatus``
(``pkg/util/node``): a two-way strategic merge patch from the Node read to the Node
wanted, whose spec is the read one. The patch carries no resourceVersion, so a write of
other fields between the kubelet's read and its patch (``kubectl label node``, the TTL
controller) does not conflict; ``nodeStatusStrategy.PrepareForUpdate``
(``pkg/registry/core/node/strategy.go``) resets only the spec, so the labels and the
annotation the kubelet sets at registration are stored.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any, cast

from kubeprio.api.core import Node, NodeAddress, NodeCondition
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver.service import ApiService
from kubeprio.client.nodestatuspatch import node_status_patch
from kubeprio.client.protocol import Client, PatchType
from kubeprio.kubelet.kubelet import Kubelet
from kubeprio.kubelet.node import CONTROLLER_MANAGED_ATTACH_ANNOTATION
from tests.builders import node
from tests.unit.kubelet.conftest import Cluster


class InterleavingClient:
    """The API, recording the kubelet's Node writes; ``between`` runs once, right after
    the next read of a Node (another writer acting between the kubelet's read and write)."""

    def __init__(self, api: ApiService) -> None:
        self.api = api
        self.between: Callable[[], None] | None = None
        self.node_writes: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def get(self, kind: type[Any], name: str, namespace: str | None = None) -> Any:
        found = self.api.get(kind, name, namespace)
        if kind is Node and self.between is not None:
            between, self.between = self.between, None
            between()
        return found

    def update(self, obj: Any, *, dry_run: bool = False) -> Any:
        if isinstance(obj, Node):
            self.node_writes.append(("update", obj))
        return self.api.update(obj, dry_run=dry_run)

    def update_status(self, obj: Any) -> Any:
        if isinstance(obj, Node):
            self.node_writes.append(("update_status", obj))
        return self.api.update_status(obj)

    def patch(self, kind: type[Any], name: str, patch: object, **options: Any) -> Any:
        if kind is Node:
            self.node_writes.append(("patch", (patch, options)))
        return self.api.patch(kind, name, patch, **options)


def _kubelet(cluster: Cluster, client: InterleavingClient, name: str = "n1") -> Kubelet:
    kubelet = Kubelet(cast(Client, client), name, clock=cluster.clock, rng=random.Random(7))
    kubelet.start()
    return kubelet


def _label(api: ApiService, name: str, key: str, value: str) -> None:
    """``kubectl label node``: a PUT of the whole Node at the version it read."""
    current = api.get(Node, name)
    labels = {**(current.metadata.labels or {}), key: value}
    api.update(evolve(current, metadata=evolve(current.metadata, labels=labels)))


def _ready(current: Node) -> str | None:
    conditions: tuple[NodeCondition, ...] = (
        (current.status.conditions or ()) if current.status else ()
    )
    return next((c.status for c in conditions if c.type == "Ready"), None)


def _only_status_patches(writes: list[tuple[str, Any]]) -> None:
    assert writes, "the kubelet wrote nothing"
    for verb, (body, options) in writes:
        assert verb == "patch"
        assert options == {
            "patch_type": PatchType.STRATEGIC_MERGE_PATCH,
            "subresource": "status",
        }
        assert "resourceVersion" not in body.get("metadata", {})
        assert "spec" not in body


def test_start_on_an_existing_node_patches_labels_annotation_and_conditions(
    cluster: Cluster,
) -> None:
    built = node("n1").allocatable(cpu="2", pods="10").build()
    cluster.api.create(
        dataclasses.replace(built, metadata=ObjectMeta(name="n1", labels={"own": "x"}))
    )
    client = InterleavingClient(cluster.api)
    # kubectl labels the Node between the kubelet's read and its registration patch.
    client.between = lambda: _label(cluster.api, "n1", "team", "blue")
    _kubelet(cluster, client)

    current = cluster.api.get(Node, "n1")
    assert current.metadata.labels == {
        "own": "x",
        "team": "blue",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": "n1",
        "kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
    }
    assert current.metadata.annotations == {CONTROLLER_MANAGED_ATTACH_ANNOTATION: "true"}
    assert _ready(current) == "True"
    # updateDefaultLabels + CMAD annotation, then the first status update: two patches.
    assert len(client.node_writes) == 2
    _only_status_patches(client.node_writes)


def test_resume_after_a_concurrent_label_does_not_conflict(cluster: Cluster) -> None:
    client = InterleavingClient(cluster.api)
    kubelet = _kubelet(cluster, client)
    assert _ready(cluster.api.get(Node, "n1")) == "True"
    client.node_writes.clear()
    # The node lifecycle controller marks it Unknown while the kubelet was away.
    stored = cluster.api.get(Node, "n1")
    assert stored.status is not None
    unknown = tuple(
        evolve(c, status="Unknown") if c.type == "Ready" else c
        for c in stored.status.conditions or ()
    )
    cluster.api.update_status(evolve(stored, status=evolve(stored.status, conditions=unknown)))

    client.between = lambda: _label(cluster.api, "n1", "team", "blue")
    kubelet.resume()

    current = cluster.api.get(Node, "n1")
    assert _ready(current) == "True"  # a PUT at the version read would have been a 409
    assert (current.metadata.labels or {})["team"] == "blue"
    _only_status_patches(client.node_writes)


def test_changed_addresses_are_replaced_whole() -> None:
    """``fixupPatchForNodeStatusAddresses``: addresses are tagged merge by mistake, so a
    change lists them all with a ``$patch: replace`` element."""
    built = node("n1").build()
    assert built.status is not None
    old = evolve(
        built,
        status=evolve(
            built.status,
            addresses=(
                NodeAddress(type="InternalIP", address="10.0.0.1"),
                NodeAddress(type="Hostname", address="n1"),
            ),
        ),
    )
    moved = (NodeAddress(type="InternalIP", address="10.0.0.2"),)
    new = evolve(old, status=evolve(built.status, addresses=moved))
    patch = node_status_patch(old, new)
    assert patch == {
        "status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}, {"$patch": "replace"}]
        }
    }
