"""Real cluster dumps load and serialise back to equal documents (issue 2, section 2).

The fixtures are unedited dumps of three real clusters (k3s 1.33 with managedFields,
GKE 1.12 with unquoted timestamps and old API versions, OpenShift 4.8); every field
kubeprio does not model must come back untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeprio.api import manifest, serialization
from kubeprio.api.core import Node, Pod
from kubeprio.api.scheduling import PriorityClass
from tests.conftest import REAL_CLUSTERS

FIXTURES = sorted(p for p in REAL_CLUSTERS.iterdir() if p.suffix in (".json", ".yaml"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_real_dump_round_trips_every_field(path: Path) -> None:
    text = path.read_text()
    raw_documents = manifest.load_yaml(text, path.name)  # the list documents as written
    for raw in raw_documents:
        items = [manifest.decode_object(item) for item in manifest.expand_list(raw, path.name, 0)]
        rebuilt = dict(raw)
        if "items" in raw:
            rebuilt["items"] = [serialization.to_dict(obj) for obj in items]
        else:
            rebuilt = serialization.to_dict(items[0])
        assert rebuilt == raw


def test_unquoted_timestamps_stay_strings() -> None:
    """GKE's `creationTimestamp: 2019-08-14T21:58:26Z` must not become a datetime."""
    docs = manifest.parse_text(
        "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  creationTimestamp: 2019-08-14T21:58:26Z\n",
        "x",
    )
    node = manifest.decode_document(docs[0])
    assert isinstance(node, Node)
    assert node.metadata.creation_timestamp == "2019-08-14T21:58:26Z"


def test_legacy_priority_class_version_decodes() -> None:
    path = REAL_CLUSTERS / "criticalhop__kalc__gke-daemonset-eviction-priorityclass.yaml"
    objects = [
        manifest.decode_document(d) for d in manifest.parse_text(path.read_text(), path.name)
    ]
    assert all(isinstance(o, PriorityClass) for o in objects)
    high = next(
        o for o in objects if isinstance(o, PriorityClass) and o.metadata.name == "high-priority"
    )
    assert high.value == 1_000_000
    assert high.api_version == "scheduling.k8s.io/v1beta1"


def test_modelled_fields_are_read_from_real_pods() -> None:
    path = REAL_CLUSTERS / "replicatedhq__troubleshoot__k3s-bundle-pods-default.json"
    pods = [manifest.decode_document(d) for d in manifest.parse_text(path.read_text(), path.name)]
    pending = [p for p in pods if isinstance(p, Pod) and p.status and p.status.phase == "Pending"]
    assert len(pending) == 2
    requests = pending[0].spec.containers[0].resources.requests  # type: ignore[index,union-attr]
    assert str(requests["cpu"]) == "800m"


def test_null_in_a_modelled_field_round_trips() -> None:
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": None}}
    pod = serialization.from_dict(Pod, data)
    assert pod.metadata.creation_timestamp is None
    # Go writes the unset struct values too: PodSpec (with its nil ``containers``, which
    # has no omitempty) and PodStatus (core/v1 types.go Pod.Spec, Pod.Status).
    assert serialization.to_dict(pod) == {**data, "spec": {"containers": None}, "status": {}}
