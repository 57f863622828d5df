"""Kubelet admission: pods bound to the node start, or are rejected with upstream's texts.

Upstream: ``pkg/kubelet/lifecycle/predicate.go`` (``Admit``, ``InsufficientResourceError``),
``pkg/kubelet/kubelet.go`` ``rejectPod`` ("Pod was rejected: " + message, Warning event
with the bare message) and ``pkg/kubelet/eviction/eviction_manager.go`` ``Admit``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import PHASE_FAILED, PHASE_RUNNING, Pod
from kubeprio.kubelet import admission
from tests.builders import node, pod
from tests.unit.kubelet.conftest import Cluster, events


def small_node(**extra: str) -> object:
    values = {"cpu": "2", "memory": "1Gi", "pods": "2", "ephemeral_storage": "10Gi", **extra}
    return node("n1").allocatable(**values).build()


def test_started_pod_reports_running_ready_with_start_time_and_ip(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=small_node())
    started = cluster.run(pod("web").requests(cpu="500m").build())
    status = started.status
    assert status is not None
    assert status.phase == PHASE_RUNNING
    assert status.start_time == "2026-01-01T00:00:00Z"
    assert status.pod_ip
    assert status.host_ip
    conditions = {c.type: c.status for c in status.conditions or ()}
    assert conditions == {
        "PodReadyToStartContainers": "True",
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
        "PodScheduled": "True",
    }
    (container,) = status.container_statuses or ()
    assert container.ready is True
    assert container.started is True
    assert "running" in container.extra["state"]


def test_pod_ips_are_distinct_and_deterministic(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=node("n1").allocatable(cpu="2", pods="10").build())
    ips = [cluster.run(pod(f"p{i}").build()).status.pod_ip for i in range(3)]  # type: ignore[union-attr]
    assert len(set(ips)) == 3
    assert ips == sorted(ips, key=lambda ip: [int(part) for part in ip.split(".")])  # type: ignore[union-attr]


REJECTIONS = [
    # (what fills the node, the pod that does not fit, reason, message)
    (
        [pod("a").requests(cpu="1500m").build()],
        pod("x").requests(cpu="800m").build(),
        "OutOfcpu",
        "Node didn't have enough resource: cpu, requested: 800, used: 1500, capacity: 2000",
    ),
    (
        [pod("a").requests(memory="600Mi").build()],
        pod("x").requests(memory="512Mi").build(),
        "OutOfmemory",
        "Node didn't have enough resource: memory, requested: 536870912, used: 629145600, capacity: 1073741824",
    ),
    (
        [pod("a").build(), pod("b").build()],
        pod("x").build(),
        "OutOfpods",
        "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
    ),
    (
        [],
        pod("x").requests(ephemeral_storage="20Gi").build(),
        "OutOfephemeral-storage",
        "Node didn't have enough resource: ephemeral-storage, requested: 21474836480, used: 0, capacity: 10737418240",
    ),
    (
        [],
        # Hugepages cannot be overcommitted (limit required, equal to the request) and
        # need cpu or memory beside them (ValidateResourceRequirements).
        pod("x")
        .requests(memory="64Mi", hugepages_2Mi="2Mi")
        .limits(memory="64Mi", hugepages_2Mi="2Mi")
        .build(),
        "OutOfhugepages-2Mi",
        "Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 0, capacity: 0",
    ),
]


@pytest.mark.parametrize(
    ("fill", "extra", "reason", "message"),
    REJECTIONS,
    ids=["cpu", "memory", "pods", "ephemeral-storage", "hugepages"],
)
def test_pod_that_does_not_fit_is_rejected_with_upstream_reason_and_message(
    cluster: Cluster, fill: list[Pod], extra: Pod, reason: str, message: str
) -> None:
    cluster.kubelet("n1", node=small_node())
    for running in fill:
        assert cluster.run(running).status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    rejected = cluster.run(extra)
    status = rejected.status
    assert status is not None
    assert status.phase == PHASE_FAILED
    assert status.reason == reason
    assert status.message == "Pod was rejected: " + message
    (event,) = events(cluster.api, name="x")
    assert (event.type, event.reason, event.message) == ("Warning", reason, message)
    assert event.source is not None
    assert event.source.component == "kubelet"


def test_rejected_pod_holds_nothing(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=small_node())
    cluster.run(pod("big").requests(cpu="3").build())
    assert kubelet.allocated() == {"pods": 0}
    assert cluster.run(pod("fits").requests(cpu="2").build()).status.phase == PHASE_RUNNING  # type: ignore[union-attr]


def test_unknown_extended_resource_is_ignored_as_upstream_does(cluster: Cluster) -> None:
    """``removeMissingExtendedResources``: resources the node does not know may be cluster-level."""
    cluster.kubelet("n1", node=small_node())
    widget = {"example.com/widget": "1"}  # extended resources need limit == request
    started = cluster.run(pod("x").requests(**widget).limits(**widget).build())
    assert started.status.phase == PHASE_RUNNING  # type: ignore[union-attr]


def test_pods_bound_together_are_admitted_in_creation_order(cluster: Cluster) -> None:
    """``HandlePodAdditions`` sorts new pods by creation time before admitting them."""
    from tests.unit.kubelet.conftest import bind

    cluster.kubelet("n1", node=small_node())
    late_name_first = cluster.api.create(pod("a-second").requests(cpu="1500m").build())
    cluster.clock.advance(1)
    other = cluster.api.create(pod("z-first").requests(cpu="1500m").build())
    # Bind the later-created pod first; the kubelet still admits by creation time.
    bind(cluster.api, other, "n1")
    bind(cluster.api, late_name_first, "n1")
    cluster.driver.settle()
    assert cluster.pod("a-second").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert cluster.pod("z-first").status.reason == "OutOfcpu"  # type: ignore[union-attr]


ADMIT_UNDER_PRESSURE = [
    (["MemoryPressure"], pod("be").build(), False),
    (["MemoryPressure"], pod("burstable").requests(memory="10Mi").build(), True),
    (
        ["MemoryPressure"],
        pod("tolerant")
        .spec(
            tolerations=(
                admission.Toleration(
                    key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"
                ),
            )
        )
        .build(),
        True,
    ),
    (["DiskPressure"], pod("burstable").requests(memory="10Mi").build(), False),
    (["MemoryPressure"], pod("critical").priority(2_000_000_000).build(), True),
    ([], pod("be").build(), True),
]


@pytest.mark.parametrize(
    ("conditions", "candidate", "admitted"),
    ADMIT_UNDER_PRESSURE,
    ids=[
        "memory-pressure-best-effort",
        "memory-pressure-burstable",
        "memory-pressure-best-effort-tolerating",
        "disk-pressure-rejects-all",
        "critical-always",
        "no-pressure",
    ],
)
def test_admission_under_node_pressure(
    conditions: list[str], candidate: Pod, admitted: bool
) -> None:
    """``managerImpl.Admit``: BestEffort pods wait out memory pressure, all pods disk pressure."""
    result = admission.admit_under_pressure(candidate, conditions)
    assert result.admit is admitted
    if not admitted:
        assert result.reason == "Evicted"
        assert result.message == f"The node had condition: [{' '.join(conditions)}]. "


def test_pod_ips_come_from_an_ipv6_pod_cidr(cluster: Cluster) -> None:
    """A node with an IPv6 /64 ``podCIDR`` (2^64 hosts) hands out its hosts in order,
    after the bridge's first one, without listing them."""
    import dataclasses

    from kubeprio.api.core import NodeSpec

    built = node("n1").allocatable(cpu="2", pods="10").build()
    built = dataclasses.replace(
        built, spec=dataclasses.replace(built.spec or NodeSpec(), pod_cidr="fd00:10:244:1::/64")
    )
    cluster.kubelet("n1", node=built)
    ips = [cluster.run(pod(f"p{i}").build()).status.pod_ip for i in range(2)]  # type: ignore[union-attr]
    assert ips == ["fd00:10:244:1::2", "fd00:10:244:1::3"]
