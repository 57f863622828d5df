"""Node leases: what upstream's kubelet lease controller writes, and when.

Upstream: ``k8s.io/component-helpers/apimachinery/lease/controller.go`` (``newLease``,
``sync``, ``retryUpdateLease``, ``JitterUntil(sync, renewInterval, 0.04)``) with the
kubelet's ``setNodeOwnerFunc`` and defaults (``--node-lease-duration-seconds=40``, renew
interval 25 % of it), in namespace ``kube-node-lease``.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from kubeprio.api import errors
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE, Lease
from kubeprio.api.core import Node
from kubeprio.api.model import evolve
from kubeprio.clock import parse_rfc3339, rfc3339, rfc3339_micro
from kubeprio.kubelet.nodelease import DEFAULT_LEASE_DURATION_SECONDS, JITTER_FACTOR, TICK_SECONDS
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver

CAPACITY = {"cpu": "4", "memory": "8Gi"}


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=3, node_leases=True)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def lease(plane: ControlPlane, name: str) -> Lease:
    return plane.api.get(Lease, name, NODE_LEASE_NAMESPACE)


def renewed_at(plane: ControlPlane, name: str) -> float:
    return parse_rfc3339(lease(plane, name).spec.renew_time)


def renewals(plane: ControlPlane, driver: Driver, name: str, seconds: float) -> list[float]:
    """The clock readings at which ``name``'s Lease was renewed during ``seconds``."""
    seen: list[float] = []
    end = driver.clock.now() + seconds
    last = lease(plane, name).spec.renew_time
    while (wakeup := driver.next_wakeup()) is not None and wakeup <= end:
        driver.advance(wakeup - driver.clock.now())
        current = lease(plane, name).spec.renew_time
        if current != last:
            seen.append(driver.clock.now())
            last = current
    return seen


def test_a_new_node_gets_its_lease_at_once_as_the_kubelet_creates_it(plane, driver, clock):
    node = register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.settle()
    created = lease(plane, "n1")
    assert created.metadata.namespace == "kube-node-lease"
    assert created.spec.holder_identity == "n1"
    assert created.spec.lease_duration_seconds == DEFAULT_LEASE_DURATION_SECONDS == 40
    assert created.spec.renew_time == rfc3339_micro(clock.now())
    # Upstream's kubelet sets neither an acquire time nor transitions.
    assert created.spec.acquire_time is None
    assert created.spec.lease_transitions is None
    (owner,) = created.metadata.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid) == (
        "v1",
        "Node",
        "n1",
        node.metadata.uid,
    )
    assert not owner.controller


def test_renewals_come_every_10_to_10_4_seconds_after_the_first_spread_interval(
    plane, driver, clock
):
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.settle()
    start = clock.now()
    times = renewals(plane, driver, "n1", 60.0)
    # The first renewal lands somewhere in the first interval (spreading the fleet) ...
    assert start < times[0] <= start + 10.0
    # ... and every later one after renewInterval plus at most 4 % jitter, due on the
    # next quarter-second tick (so the serve loop renews many leases per wake-up).
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) >= 4
    assert all(10.0 <= gap <= 10.0 * (1 + JITTER_FACTOR) + TICK_SECONDS for gap in gaps), gaps
    assert all(t / TICK_SECONDS == round(t / TICK_SECONDS) for t in times[1:])
    # A renewal moves renewTime only: the same object, created once.
    assert lease(plane, "n1").metadata.creation_timestamp == rfc3339(start)


def test_a_fleet_registered_at_once_renews_spread_over_the_interval(plane, driver, clock):
    for index in range(40):
        register_node(plane.api, f"n{index}", clock=clock, capacity=CAPACITY)
    driver.settle()
    start = clock.now()
    driver.advance(10.0)
    offsets = sorted(renewed_at(plane, f"n{index}") - start for index in range(40))
    # Not every lease renewed in one instant: the second renewals fall all over 0-10 s.
    assert offsets[0] < 2.5
    assert offsets[-1] > 7.5


def test_a_renewal_after_someone_else_wrote_the_lease_reads_it_again(plane, driver, clock):
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.settle()
    other = lease(plane, "n1")
    plane.api.update(evolve(other, metadata=evolve(other.metadata, labels={"touched": "yes"})))
    driver.advance(11.0)
    renewed = lease(plane, "n1")
    # retryUpdateLease: the conflict made it read the Lease again, so the label survives.
    assert renewed_at(plane, "n1") > parse_rfc3339(other.spec.renew_time)
    assert renewed.metadata.labels == {"touched": "yes"}
    assert plane.node_leases is not None
    assert plane.node_leases.failures == 0


def test_a_deleted_lease_is_created_again_at_the_next_renewal(plane, driver, clock):
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.settle()
    first = lease(plane, "n1")
    plane.api.delete(Lease, "n1", NODE_LEASE_NAMESPACE)
    driver.advance(11.0)
    again = lease(plane, "n1")
    assert again.metadata.uid != first.metadata.uid
    assert again.spec.holder_identity == "n1"


def test_deleting_the_node_stops_renewals_and_collects_its_lease(plane, driver, clock):
    # The Lease's ownerReference names the Node: the garbage collector deletes it.
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    register_node(plane.api, "n2", clock=clock, capacity=CAPACITY)
    driver.settle()
    plane.api.delete(Node, "n1")
    driver.advance(30.0)
    with pytest.raises(errors.NotFoundError):
        lease(plane, "n1")
    assert clock.now() - renewed_at(plane, "n2") <= 10.0 * (1 + JITTER_FACTOR) + TICK_SECONDS


def test_a_node_deleted_and_registered_again_has_one_kubelet_renewing(plane, driver, clock):
    # The old Node's timer dies with it: the new Node's kubelet renews once per interval.
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.settle()
    plane.api.delete(Node, "n1")
    driver.settle()
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    driver.advance(2.0)
    times = renewals(plane, driver, "n1", 60.0)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) >= 4
    assert all(gap >= 10.0 for gap in gaps), gaps


def test_a_simulation_control_plane_keeps_leases_only_for_nodes_that_can_fail(clock):
    """A simulation renews the Leases of nodes annotated ``kubeprio.io/fail-at`` only."""
    plane = ControlPlane(MemoryStore(), clock=clock, seed=3)
    plane.attach_fleet()
    driver = Driver(clock, [plane.informers], plane.components)
    plane.start()
    register_node(plane.api, "plain", clock=clock, capacity=CAPACITY)
    failing = register_node(plane.api, "failing", clock=clock, capacity=CAPACITY)
    meta = dataclasses.replace(failing.metadata, annotations={"kubeprio.io/fail-at": "1h"})
    plane.api.update(dataclasses.replace(failing, metadata=meta))
    driver.advance(30.0)
    names = sorted(
        lease.metadata.name or "" for lease in plane.api.list(Lease, "kube-node-lease").items
    )
    assert names == ["failing"]
