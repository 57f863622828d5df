"""The annotation a kubelet puts on its Node.

Upstream: ``pkg/kubelet/kubelet_node_status.go``: ``initialNode`` sets
``volumes.kubernetes.io/controller-managed-attach-detach: "true"`` (the kubelet's
``--enable-controller-attach-detach`` defaults to true), and
``reconcileCMADAnnotationWithExistingNode`` adds it to a Node that exists when the kubelet
starts (a ``--nodes-file`` node), keeping the Node's own annotations.
"""

from __future__ import annotations

import dataclasses

from kubeprio.api.core import Node
from kubeprio.api.meta import ObjectMeta
from kubeprio.kubelet.node import CONTROLLER_MANAGED_ATTACH_ANNOTATION
from tests.builders import node
from tests.unit.kubelet.conftest import Cluster


def test_registered_node_carries_the_attach_detach_annotation(cluster: Cluster) -> None:
    cluster.kubelet("worker-1", capacity={"cpu": "8"})
    annotations = cluster.api.get(Node, "worker-1").metadata.annotations
    assert annotations == {"volumes.kubernetes.io/controller-managed-attach-detach": "true"}


def test_existing_node_gains_it_and_keeps_its_own(cluster: Cluster) -> None:
    built = node("n1").allocatable(cpu="3", pods="7").build()
    built = dataclasses.replace(built, metadata=ObjectMeta(name="n1", annotations={"own": "x"}))
    cluster.kubelet("n1", node=built)
    current = cluster.api.get(Node, "n1")
    assert current.metadata.annotations == {
        "own": "x",
        CONTROLLER_MANAGED_ATTACH_ANNOTATION: "true",
    }
    status = current.status
    assert status is not None
    assert any(c.type == "Ready" and c.status == "True" for c in status.conditions or ())
