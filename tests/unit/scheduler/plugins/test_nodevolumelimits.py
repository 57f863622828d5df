"""NodeVolumeLimits, after upstream ``nodevolumelimits/csi_test.go`` (``TestCSILimits``,
``TestCSILimitsQHint``/``TestCSILimitsAddedPVCQHint``, v1.32) and ``csi.go``'s rules:
limits from CSINode ``allocatable.count`` and ``attachable-volumes-*`` node allocatable,
unique ``driver/handle`` counting, claims resolved through PV or StorageClass, ephemeral
claims owned by the pod, in-tree volumes translated when ``isCSIMigrationOn``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.csi import CSINode
from kubeprio.api.csitranslation import csi_attach_limit_key
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.storageclass import StorageClass
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint
from kubeprio.scheduler.plugins import nodevolumelimits as nvl
from kubeprio.scheduler.plugins.nodevolumelimits import NodeVolumeLimits
from kubeprio.scheduler.snapshot import NodeInfo
from tests.builders import node, pod

EXCEEDED = framework.Status(framework.Code.UNSCHEDULABLE, (nvl.ERR_MAX_VOLUME_COUNT_EXCEEDED,))
DRIVER = "ebs.csi.aws.com"
OTHER_DRIVER = "hostpath.csi.k8s.io"


def decode(data: dict[str, Any]) -> Any:
    return manifest.decode_object(data)


def with_volumes(
    name: str, *volumes: dict[str, Any], node_name: str | None = None, uid: str = ""
) -> Pod:
    builder = pod(name)
    if node_name:
        builder = builder.on(node_name)
    if uid:
        builder = builder.uid(uid)
    built = builder.build()
    return evolve(
        built, spec=evolve(built.spec, extra={**built.spec.extra, "volumes": list(volumes)})
    )


def uses(claim: str, volume: str = "v") -> dict[str, Any]:
    return {"name": volume, "persistentVolumeClaim": {"claimName": claim}}


def ephemeral(volume: str) -> dict[str, Any]:
    return {"name": volume, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def claim(
    name: str, *, volume: str = "", storage_class: str | None = None, owner_uid: str = ""
) -> PersistentVolumeClaim:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"]}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    obj = decode(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    )
    assert isinstance(obj, PersistentVolumeClaim)
    return obj


def csi_volume(name: str, driver: str = DRIVER, handle: str = "") -> PersistentVolume:
    source = {"csi": {"driver": driver, "volumeHandle": handle or f"h-{name}"}}
    return _volume(name, source)


def _volume(
    name: str, source: dict[str, Any], labels: dict[str, str] | None = None
) -> PersistentVolume:
    obj = decode(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **source},
        }
    )
    assert isinstance(obj, PersistentVolume)
    return obj


def storage_class(name: str, provisioner: str) -> StorageClass:
    obj = decode(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": provisioner,
        }
    )
    assert isinstance(obj, StorageClass)
    return obj


def csi_node(limits: dict[str, int | None], annotations: dict[str, str] | None = None) -> CSINode:
    drivers = []
    for driver, count in limits.items():
        entry: dict[str, Any] = {"name": driver, "nodeID": "n1", "topologyKeys": None}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    obj = decode(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n1", "annotations": annotations or {}},
            "spec": {"drivers": drivers},
        }
    )
    assert isinstance(obj, CSINode)
    return obj


CLAIMS = [
    claim("c1", volume="pv1"),
    claim("c2", volume="pv2"),
    claim("c3", volume="pv3"),
    claim("other-driver", volume="pv-other"),
    claim("unbound", storage_class="csi-sc"),
    claim("unbound-2", storage_class="csi-sc"),
    claim("missing-pv", volume="no-such-pv", storage_class="csi-sc"),
    claim("no-class"),
    claim("missing-class", storage_class="no-such-class"),
    claim("ebs-pv", volume="pv-ebs"),
    claim("intree-unbound", storage_class="ebs-intree"),
    claim("nfs", volume="pv-nfs"),
    claim("p-eph", volume="pv-eph", owner_uid="uid-p"),
    claim("stranger-eph", volume="pv-eph2", owner_uid="someone-else"),
]
VOLUMES = [
    csi_volume("pv1"),
    csi_volume("pv2"),
    csi_volume("pv3"),
    csi_volume("pv-other", driver=OTHER_DRIVER),
    csi_volume("pv-eph"),
    csi_volume("pv-eph2"),
    _volume("pv-ebs", {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}),
    _volume("pv-nfs", {"nfs": {"server": "s", "path": "/"}}),
]
CLASSES = [storage_class("csi-sc", DRIVER), storage_class("ebs-intree", "kubernetes.io/aws-ebs")]


def plugin(csi: CSINode | None) -> NodeVolumeLimits:
    claims = {c.metadata.name: c for c in CLAIMS}
    volumes = {v.metadata.name: v for v in VOLUMES}
    classes = {c.metadata.name: c for c in CLASSES}
    return NodeVolumeLimits(
        lambda name, namespace: claims.get(name),
        volumes.get,
        classes.get,
        lambda name: csi if name == "n1" else None,
    )


def run(
    incoming: Pod,
    existing: list[Pod],
    csi: CSINode | None,
    allocatable: dict[str, str] | None = None,
) -> framework.Status | None:
    info = NodeInfo(node("n1").allocatable(**(allocatable or {})).build())
    for other in existing:
        info.add_pod(framework.PodInfo.of(other))
    p = plugin(csi)
    state = framework.CycleState()
    pod_info = framework.PodInfo.of(incoming)
    _, status = p.pre_filter(state, pod_info, [info])
    if status is not None:
        return status
    return p.filter(state, pod_info, info)


def on_node(name: str, *volumes: dict[str, Any], uid: str = "") -> Pod:
    return with_volumes(name, *volumes, node_name="n1", uid=uid)


EBS_INLINE = {"name": "e", "awsElasticBlockStore": {"volumeID": "vol-1"}}
EBS_INLINE_URL = {"name": "e", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}
EBS_INLINE_2 = {"name": "e2", "awsElasticBlockStore": {"volumeID": "vol-2"}}
PORTWORX = {"name": "px", "portworxVolume": {"volumeID": "px-1"}}
AZURE_FILE = {"name": "af", "azureFile": {"secretName": "s", "shareName": "share"}}
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"

CASES = [
    pytest.param(
        with_volumes("p", uses("c1")), [], csi_node({DRIVER: 1}), None, id="fits-at-the-limit"
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="limit-reached",
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 2}),
        None,
        id="room-for-one-more",
    ),
    pytest.param(
        with_volumes("p", uses("c1")),
        [on_node("a", uses("c1")), on_node("b", uses("c1"))],
        csi_node({DRIVER: 1}),
        None,
        id="shared-volume-counts-once",
    ),
    pytest.param(
        with_volumes("p", uses("c1", "a"), uses("c1", "b")),
        [],
        csi_node({DRIVER: 1}),
        None,
        id="same-claim-twice-in-the-pod-counts-once",
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("other-driver"))],
        csi_node({DRIVER: 1, OTHER_DRIVER: 1}),
        None,
        id="limits-are-per-driver",
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("c1"))],
        None,
        None,
        id="no-csinode-no-limit",
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: None}),
        None,
        id="driver-without-allocatable-no-limit",
    ),
    pytest.param(
        with_volumes("p", uses("unbound")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="unbound-claim-counted-through-its-class",
    ),
    pytest.param(
        with_volumes("p", uses("unbound")),
        [on_node("a", uses("unbound"))],
        csi_node({DRIVER: 1}),
        None,
        id="unbound-claim-shared-counts-once",
    ),
    pytest.param(
        with_volumes("p", uses("missing-pv")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="claim-with-missing-volume-falls-back-to-class",
    ),
    pytest.param(
        with_volumes("p", uses("no-class")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        None,
        id="unbound-claim-without-class-not-counted",
    ),
    pytest.param(
        with_volumes("p", uses("missing-class")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        None,
        id="unbound-claim-with-missing-class-not-counted",
    ),
    pytest.param(
        with_volumes("p", uses("nfs")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        None,
        id="non-csi-volume-not-counted",
    ),
    pytest.param(
        with_volumes("p", uses("c2")),
        [on_node("a", uses("gone"))],
        csi_node({DRIVER: 1}),
        None,
        id="existing-pod-missing-claim-not-counted",
    ),
    pytest.param(
        with_volumes("p", uses("gone")),
        [],
        csi_node({DRIVER: 1}),
        framework.unresolvable(
            'looking up PVC default/gone: persistentvolumeclaim "gone" not found'
        ),
        id="missing-claim-unresolvable",
    ),
    pytest.param(
        with_volumes("p", uses("ebs-pv")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="in-tree-pv-counted-against-its-csi-driver",
    ),
    pytest.param(
        with_volumes("p", uses("ebs-pv")),
        [on_node("a", EBS_INLINE)],
        csi_node({DRIVER: 1}),
        None,
        id="in-tree-pv-and-inline-same-disk-count-once",
    ),
    pytest.param(
        with_volumes("p", uses("ebs-pv")),
        [on_node("a", uses("c1"))],
        None,
        None,
        id="in-tree-not-counted-without-csinode",
    ),
    pytest.param(
        with_volumes("p", EBS_INLINE_2),
        [on_node("a", EBS_INLINE_URL)],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="inline-in-tree-volumes-counted",
    ),
    pytest.param(
        with_volumes("p", EBS_INLINE_URL),
        [on_node("a", EBS_INLINE)],
        csi_node({DRIVER: 1}),
        None,
        id="aws-url-and-bare-id-are-one-volume",
    ),
    pytest.param(
        with_volumes("p", uses("intree-unbound")),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="in-tree-class-translated-to-csi-driver",
    ),
    pytest.param(
        with_volumes("p", PORTWORX),
        [on_node("a", {"name": "q", "portworxVolume": {"volumeID": "px-0"}})],
        csi_node({"pxd.portworx.com": 1}),
        None,
        id="portworx-needs-migrated-annotation",
    ),
    pytest.param(
        with_volumes("p", PORTWORX),
        [on_node("a", {"name": "q", "portworxVolume": {"volumeID": "px-0"}})],
        csi_node({"pxd.portworx.com": 1}, {MIGRATED: "kubernetes.io/portworx-volume"}),
        EXCEEDED,
        id="portworx-counted-when-annotated",
    ),
    pytest.param(
        with_volumes("p", AZURE_FILE),
        [on_node("a", AZURE_FILE)],
        csi_node({"file.csi.azure.com": 0}),
        None,
        id="azure-file-never-counted",
    ),
    pytest.param(
        with_volumes("p", ephemeral("eph"), uid="uid-p"),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 1}),
        EXCEEDED,
        id="ephemeral-volume-counted",
    ),
    pytest.param(
        with_volumes("stranger", ephemeral("eph"), uid="uid-x"),
        [],
        csi_node({DRIVER: 1}),
        framework.error(
            "PVC default/stranger-eph was not created for pod default/stranger (pod is not owner)"
        ),
        id="ephemeral-claim-of-another-owner-is-an-error",
    ),
    pytest.param(
        with_volumes("p", {"name": "x", "emptyDir": {}}),
        [on_node("a", uses("c1"))],
        csi_node({DRIVER: 0}),
        None,
        id="pod-without-attachable-volumes-skipped",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "csi", "want"), CASES)
def test_csi_limits(incoming, existing, csi, want):
    status = run(incoming, existing, csi)
    if want is None:
        assert status is None or status.code is framework.Code.SKIP
    else:
        assert status == want


def test_node_allocatable_attachable_volumes_limit():
    """``getVolumeLimits`` starts from the node's ``attachable-volumes-*`` allocatable."""
    key = csi_attach_limit_key(DRIVER)
    existing = [on_node("a", uses("c1"))]
    assert run(with_volumes("p", uses("c2")), existing, None, {key: "1"}) == EXCEEDED
    assert run(with_volumes("p", uses("c2")), existing, None, {key: "2"}) is None
    # The CSINode's count overrides the node's allocatable for the same driver.
    assert run(with_volumes("p", uses("c2")), existing, csi_node({DRIVER: 5}), {key: "1"}) is None


def test_exceeded_is_unschedulable_so_preemption_may_help():
    status = run(with_volumes("p", uses("c2")), [on_node("a", uses("c1"))], csi_node({DRIVER: 1}))
    assert status is not None
    assert status.code is framework.Code.UNSCHEDULABLE
    assert status.reasons == ("node(s) exceed max volume count",)


def test_removing_a_pod_frees_its_slot_in_a_dry_run_clone():
    """Preemption's dry runs clone the NodeInfo and remove victims: the volume references
    leave with them, and the original is untouched."""
    info = NodeInfo(node("n1").build())
    holder = framework.PodInfo.of(on_node("a", uses("c1")))
    info.add_pod(holder)
    p = plugin(csi_node({DRIVER: 1}))
    incoming = framework.PodInfo.of(with_volumes("p", uses("c2")))
    state = framework.CycleState()
    assert p.filter(state, incoming, info) == EXCEEDED
    clone = info.clone()
    clone.remove_pod(holder)
    assert p.filter(state, incoming, clone) is None
    assert p.filter(state, incoming, info) == EXCEEDED
    assert clone.volume_refs == {}


def test_attach_limit_key_of_a_long_driver_name():
    """``GetCSIAttachLimitKey``: 23 characters of the driver and 16 hex digits of its SHA-1."""
    long_name = "a-very-long-csi-driver-name.storage.example.com"
    key = csi_attach_limit_key(long_name)
    assert key.startswith("attachable-volumes-csi-a-very-long-csi-driver")
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16
    assert csi_attach_limit_key("short.csi") == "attachable-volumes-csi-short.csi"


# --- queueing hints ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (on_node("d", uses("c1")), QueueingHint.QUEUE),
        (on_node("d", ephemeral("x")), QueueingHint.QUEUE),
        (on_node("d", EBS_INLINE), QueueingHint.QUEUE),
        (on_node("d", {"name": "x", "emptyDir": {}}), QueueingHint.QUEUE_SKIP),
        (on_node("d"), QueueingHint.QUEUE_SKIP),
        (with_volumes("d", uses("c1")), QueueingHint.QUEUE_SKIP),
    ],
    ids=["claim", "ephemeral", "inline-ebs", "empty-dir", "no-volumes", "not-bound"],
)
def test_after_pod_deleted(deleted, want):
    """``isSchedulableAfterPodDeleted``."""
    waiting = framework.PodInfo.of(with_volumes("p", uses("c2")))
    assert nvl.after_pod_deleted(waiting, deleted, None) is want


@pytest.mark.parametrize(
    ("added", "want"),
    [
        (claim("c2"), QueueingHint.QUEUE),
        (claim("p-eph"), QueueingHint.QUEUE),
        (claim("unrelated"), QueueingHint.QUEUE_SKIP),
        (
            evolve(claim("c2"), metadata=evolve(claim("c2").metadata, namespace="other")),
            QueueingHint.QUEUE_SKIP,
        ),
    ],
    ids=["named-claim", "ephemeral-claim", "unrelated", "other-namespace"],
)
def test_after_claim_added(added, want):
    """``isSchedulableAfterPVCAdded``."""
    waiting = framework.PodInfo.of(with_volumes("p", uses("c2"), ephemeral("eph")))
    assert nvl.after_claim_added(waiting, None, added) is want
