"""A Node's ``status`` write may change its metadata; only the spec is reset.

Upstream: ``nodeStatusStrategy.PrepareForUpdate`` (``pkg/registry/core/node/strategy.go``)
sets the new Node's spec to the stored one and nothing else, unlike the other kinds'
status strategies; the kubelet relies on it to set its annotation and default labels
through its ``nodes/status`` patch (``tryRegisterWithAPIServer``). A pod's status write,
for contrast, keeps the stored owner references (``podStatusStrategy``); every kind's
row is in ``tests/unit/apiserver/test_status_strategies.py``.
"""

from __future__ import annotations

from kubeprio.api.core import Node, NodeSpec, Pod
from kubeprio.api.meta import OwnerReference
from kubeprio.api.model import evolve
from kubeprio.apiserver.service import ApiService
from tests.builders import node, pod


def test_node_status_update_stores_labels_and_annotations_but_not_the_spec(
    api: ApiService,
) -> None:
    stored = api.create(node("n1").allocatable(cpu="2").build())
    meta = evolve(stored.metadata, labels={"team": "blue"}, annotations={"a": "1"})
    sent = evolve(stored, metadata=meta, spec=NodeSpec(unschedulable=True))
    written = api.update_status(sent)
    current = api.get(Node, "n1")
    assert current == written
    assert current.metadata.labels == {"team": "blue"}
    assert current.metadata.annotations == {"a": "1"}
    assert current.metadata.uid == stored.metadata.uid
    assert current.spec == stored.spec


def test_pod_status_update_stores_labels_but_keeps_the_stored_owners(api: ApiService) -> None:
    stored = api.create(pod("p").build())
    owner = OwnerReference(api_version="v1", kind="Node", name="n1", uid="u1")
    meta = evolve(stored.metadata, labels={"team": "blue"}, owner_references=(owner,))
    api.update_status(evolve(stored, metadata=meta))
    current = api.get(Pod, "p", "default").metadata
    assert current.labels == {"team": "blue"}
    assert current.owner_references == stored.metadata.owner_references


def test_node_status_config_is_dropped_unless_already_in_use(api: ApiService) -> None:
    """``nodeStatusConfigInUse``: a status write cannot start using ``status.config``."""
    stored = api.create(node("n1").allocatable(cpu="2").build())
    assert stored.status is not None
    config = {"active": {"configMap": {"name": "c"}}}
    status = evolve(stored.status, extra={**stored.status.extra, "config": config})
    written = api.update_status(evolve(stored, status=status))
    assert written.status is not None
    assert "config" not in written.status.extra
