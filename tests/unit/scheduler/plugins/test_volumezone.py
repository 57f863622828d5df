"""VolumeZone, after upstream ``volumezone/volume_zone_test.go`` (``TestSingleZone``,
``TestMultiZone``, ``TestWithBinding``) and the plugin's claim queueing hint."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.model import evolve
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint
from kubeprio.scheduler.plugins import volumezone as vz
from kubeprio.scheduler.plugins.volumezone import VolumeZone
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos

CONFLICT = framework.unresolvable(vz.ERR_REASON_CONFLICT)


def decode(doc: dict[str, Any]) -> Any:
    return manifest.decode_object(doc)


def volume(name: str, labels: dict[str, str]) -> Any:
    return decode(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels},
            "spec": {"capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}},
        }
    )


def claim(name: str, volume_name: str = "", cls: str | None = None) -> Any:
    spec: dict[str, Any] = {"resources": {"requests": {"storage": "1Gi"}}}
    if volume_name:
        spec["volumeName"] = volume_name
    if cls is not None:
        spec["storageClassName"] = cls
    return decode(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def storage_class(name: str, mode: str) -> Any:
    return decode(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": "kubeprio.io/simulated",
            "volumeBindingMode": mode,
        }
    )


VOLUMES = {
    "pv-zone-a": volume("pv-zone-a", {vz.ZONE_BETA: "us-west1-a"}),
    "pv-zone-multi": volume("pv-zone-multi", {vz.ZONE_BETA: "us-west1-b__us-west1-c"}),
    "pv-region": volume("pv-region", {vz.REGION_BETA: "us-west1"}),
    "pv-ga-zone": volume("pv-ga-zone", {vz.ZONE: "us-west1-a"}),
    "pv-plain": volume("pv-plain", {}),
}
CLAIMS = {
    "pvc-a": claim("pvc-a", "pv-zone-a"),
    "pvc-multi": claim("pvc-multi", "pv-zone-multi"),
    "pvc-region": claim("pvc-region", "pv-region"),
    "pvc-ga": claim("pvc-ga", "pv-ga-zone"),
    "pvc-plain": claim("pvc-plain", "pv-plain"),
    "pvc-wait": claim("pvc-wait", cls="wait"),
    "pvc-now": claim("pvc-now", cls="now"),
    "pvc-no-class": claim("pvc-no-class", cls=""),
    "pvc-lost": claim("pvc-lost", "pv-gone"),
}
CLASSES = {
    "wait": storage_class("wait", "WaitForFirstConsumer"),
    "now": storage_class("now", "Immediate"),
}


def plugin() -> VolumeZone:
    return VolumeZone(lambda name, namespace: CLAIMS.get(name), VOLUMES.get, CLASSES.get)


def pod_using(*claims: str) -> Pod:
    built = pod("p").build()
    volumes = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": name}}
        for i, name in enumerate(claims)
    ]
    return evolve(built, spec=evolve(built.spec, extra={**built.spec.extra, "volumes": volumes}))


def run(p: VolumeZone, incoming: Pod, labels: dict[str, str]) -> framework.Status | None:
    (info,) = node_infos([node("n1").labels(**labels).build()] if labels else [node("n1").build()])
    state = framework.CycleState()
    pod_info = framework.PodInfo.of(incoming)
    _, status = p.pre_filter(state, pod_info, [info])
    if status is not None:
        return status
    return p.filter(state, pod_info, info)


CASES = [
    pytest.param(["pvc-plain"], {vz.ZONE_BETA: "us-west1-a"}, framework.SKIP, id="no-labels"),
    pytest.param(["pvc-a"], {}, None, id="node-without-topology"),
    pytest.param(["pvc-a"], {vz.ZONE_BETA: "us-west1-a"}, None, id="same-zone"),
    pytest.param(["pvc-a"], {vz.ZONE_BETA: "us-west1-b"}, CONFLICT, id="other-zone"),
    pytest.param(["pvc-a"], {vz.ZONE: "us-west1-a"}, None, id="beta-volume-ga-node"),
    pytest.param(["pvc-ga"], {vz.ZONE_BETA: "us-west1-a"}, CONFLICT, id="ga-volume-beta-node"),
    pytest.param(["pvc-multi"], {vz.ZONE_BETA: "us-west1-c"}, None, id="multi-zone"),
    pytest.param(["pvc-region"], {vz.REGION_BETA: "us-east1"}, CONFLICT, id="other-region"),
    pytest.param(["pvc-wait"], {vz.ZONE_BETA: "x"}, framework.SKIP, id="wait-for-first-consumer"),
    pytest.param(
        ["pvc-now"],
        {vz.ZONE_BETA: "x"},
        framework.unresolvable("PersistentVolume had no name"),
        id="unbound-immediate",
    ),
    pytest.param(
        ["pvc-no-class"],
        {},
        framework.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
        id="unbound-without-class",
    ),
    pytest.param(
        ["pvc-missing"],
        {},
        framework.unresolvable('persistentvolumeclaim "pvc-missing" not found'),
        id="missing-claim",
    ),
    pytest.param(
        ["pvc-lost"],
        {},
        framework.unresolvable('persistentvolume "pv-gone" not found'),
        id="missing-volume",
    ),
]


@pytest.mark.parametrize(("claims", "labels", "expected"), CASES)
def test_volume_zone(claims, labels, expected):
    assert run(plugin(), pod_using(*claims), labels) == expected


def test_zone_set_parsing():
    """``LabelZonesToSet``: ``__`` separates zones; an empty one invalidates the label."""
    assert vz.label_zones_to_set("a__b") == {"a", "b"}
    assert vz.label_zones_to_set("a____b") is None


def test_claim_hint_only_for_the_pods_claims():
    incoming = framework.PodInfo.of(pod_using("pvc-a"))
    assert vz.after_claim_change(incoming, None, CLAIMS["pvc-a"]) is QueueingHint.QUEUE
    assert vz.after_claim_change(incoming, None, CLAIMS["pvc-multi"]) is QueueingHint.QUEUE_SKIP
