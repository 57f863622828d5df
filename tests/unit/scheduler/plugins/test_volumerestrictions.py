"""VolumeRestrictions, after upstream ``volumerestrictions/volume_restrictions_test.go``
(``TestGCEDiskConflicts``, ``TestAWSDiskConflicts``, ``TestRBDDiskConflicts``,
``TestISCSIDiskConflicts``, ``TestAccessModeConflicts``) and the plugin's queueing hints
(``TestIsSchedulableAfterPodDeleted``, ``TestIsSchedulableAfterPersistentVolumeClaimAdded``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint
from kubeprio.scheduler.plugins import volumerestrictions as vr
from kubeprio.scheduler.plugins.volumerestrictions import VolumeRestrictions
from kubeprio.scheduler.snapshot import NodeInfo
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos

DISK = framework.Status(framework.Code.UNSCHEDULABLE, (vr.ERR_DISK_CONFLICT,))
RWOP = framework.Status(framework.Code.UNSCHEDULABLE, (vr.ERR_READ_WRITE_ONCE_POD,))


def with_volumes(name: str, *volumes: dict[str, Any], node_name: str | None = None) -> Pod:
    builder = pod(name)
    if node_name:
        builder = builder.on(node_name)
    built = builder.build()
    extra = {**built.spec.extra, "volumes": list(volumes)}
    return evolve(built, spec=evolve(built.spec, extra=extra))


def claim(name: str, *modes: str) -> PersistentVolumeClaim:
    obj = manifest.decode_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": "1Gi"}}},
        }
    )
    assert isinstance(obj, PersistentVolumeClaim)
    return obj


def uses(claim_name: str, volume: str = "v") -> dict[str, Any]:
    return {"name": volume, "persistentVolumeClaim": {"claimName": claim_name}}


def plugin(claims=(), in_use=()) -> VolumeRestrictions:
    by_name = {c.metadata.name: c for c in claims}
    return VolumeRestrictions(
        lambda name, namespace: by_name.get(name), lambda key: key in set(in_use)
    )


def run(p: VolumeRestrictions, incoming: Pod, info: NodeInfo):
    state = framework.CycleState()
    pod_info = framework.PodInfo.of(incoming)
    _, status = p.pre_filter(state, pod_info, [info])
    if status is not None:
        return status, state
    return p.filter(state, pod_info, info), state


GCE = {"name": "d", "gcePersistentDisk": {"pdName": "foo"}}
GCE_RO = {"name": "d", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
EBS = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo"}}
RBD = {"name": "d", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}}
RBD_OTHER_MON = {"name": "d", "rbd": {"monitors": ["c"], "pool": "foo", "image": "bar"}}
ISCSI = {"name": "d", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:a"}}
ISCSI_RO = {"name": "d", "iscsi": {"iqn": "iqn.2016-12.server:a", "readOnly": True}}

DISK_CASES = [
    pytest.param(GCE, [], None, id="nothing"),
    pytest.param(
        GCE, [{"name": "d", "gcePersistentDisk": {"pdName": "bar"}}], None, id="gce-other"
    ),
    pytest.param(GCE, [GCE], DISK, id="gce-same"),
    pytest.param(GCE_RO, [GCE_RO], None, id="gce-both-read-only"),
    pytest.param(GCE_RO, [GCE], DISK, id="gce-one-read-only"),
    pytest.param(EBS, [EBS], DISK, id="ebs-same"),
    pytest.param(
        EBS, [{"name": "d", "awsElasticBlockStore": {"volumeID": "x"}}], None, id="ebs-other"
    ),
    pytest.param(RBD, [RBD], DISK, id="rbd-same"),
    pytest.param(RBD, [RBD_OTHER_MON], None, id="rbd-no-shared-monitor"),
    pytest.param(ISCSI, [ISCSI], DISK, id="iscsi-same"),
    pytest.param(ISCSI_RO, [ISCSI_RO], None, id="iscsi-both-read-only"),
]


@pytest.mark.parametrize(("volume", "existing", "expected"), DISK_CASES)
def test_disk_conflicts(volume, existing, expected):
    (info,) = node_infos(
        [node("n1").build()], [with_volumes("old", *existing, node_name="n1")] if existing else []
    )
    status, _ = run(plugin(), with_volumes("new", volume), info)
    assert status == expected


def test_pods_without_volumes_are_skipped():
    (info,) = node_infos([node("n1").build()])
    status, state = run(plugin(), pod("p").build(), info)
    assert status == framework.SKIP
    assert state.read(vr.STATE_KEY) is None


def test_a_missing_claim_is_unresolvable():
    (info,) = node_infos([node("n1").build()])
    status, _ = run(plugin(), with_volumes("p", uses("data")), info)
    assert status == framework.unresolvable('persistentvolumeclaim "data" not found')


ACCESS_CASES = [
    pytest.param(["ReadWriteOncePod"], ["default/data"], RWOP, id="in-use"),
    pytest.param(["ReadWriteOncePod"], [], framework.SKIP, id="not-in-use"),
    pytest.param(["ReadWriteMany"], ["default/data"], framework.SKIP, id="not-exclusive"),
]


@pytest.mark.parametrize(("modes", "in_use", "expected"), ACCESS_CASES)
def test_read_write_once_pod_conflicts(modes, in_use, expected):
    """``TestAccessModeConflicts``: only a ReadWriteOncePod claim some pod uses conflicts,
    and then on every node (the count is cluster-wide)."""
    (info,) = node_infos([node("n1").build()])
    status, _ = run(plugin([claim("data", *modes)], in_use), with_volumes("p", uses("data")), info)
    assert status == expected


def test_removing_the_holder_clears_the_conflict_and_adding_it_back_restores_it():
    """AddPod/RemovePod, as preemption's dry run calls them."""
    (info,) = node_infos([node("n1").build()])
    p = plugin([claim("data", "ReadWriteOncePod")], ["default/data"])
    state = framework.CycleState()
    incoming = framework.PodInfo.of(with_volumes("p", uses("data")))
    assert p.pre_filter(state, incoming, [info]) == (None, None)
    holder = framework.PodInfo.of(with_volumes("holder", uses("data"), node_name="n1"))
    bystander = framework.PodInfo.of(with_volumes("other", uses("else"), node_name="n1"))
    assert p.remove_pod(state, incoming, bystander, info) is None
    assert p.filter(state, incoming, info) == RWOP
    assert p.remove_pod(state, incoming, holder, info) is None
    assert p.filter(state, incoming, info) is None
    copy = state.clone()
    assert p.add_pod(copy, incoming, holder, info) is None
    assert p.filter(copy, incoming, info) == RWOP
    assert p.filter(state, incoming, info) is None  # the clone is independent


def test_queueing_hints():
    incoming = framework.PodInfo.of(with_volumes("p", uses("data"), GCE))
    other_ns = evolve(
        with_volumes("x", uses("data")),
        metadata=evolve(with_volumes("x").metadata, namespace="other"),
    )
    assert (
        vr.after_pod_deleted(incoming, with_volumes("x", uses("data")), None) is QueueingHint.QUEUE
    )
    assert vr.after_pod_deleted(incoming, with_volumes("x", GCE), None) is QueueingHint.QUEUE
    assert vr.after_pod_deleted(incoming, with_volumes("x", uses("y")), None) is (
        QueueingHint.QUEUE_SKIP
    )
    assert vr.after_pod_deleted(incoming, other_ns, None) is QueueingHint.QUEUE_SKIP
    assert vr.after_claim_added(incoming, None, claim("data")) is QueueingHint.QUEUE
    assert vr.after_claim_added(incoming, None, claim("y")) is QueueingHint.QUEUE_SKIP
