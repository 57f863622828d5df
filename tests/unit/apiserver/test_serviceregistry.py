"""The Service registry's allocations through the API service's write path.

Upstream: ``pkg/registry/core/service/storage`` (``allocateCreate``/``allocateUpdate``,
release in ``afterDelete``), ``ipallocator``/``portallocator`` (``ErrAllocated``,
``ErrNotInRange``, the random scan above the reserved lower band) and the repair
controllers (allocations rebuilt from stored Services)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.model import evolve
from kubeprio.api.serialization import from_dict
from kubeprio.api.service import Service
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.serviceranges import NodePortRange, ServiceIPRange
from kubeprio.client.protocol import PatchType


def svc(name: str, **spec: Any) -> Service:
    body = {"ports": [{"port": 80}], **spec}
    return from_dict(
        Service,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": body,
        },
    )


def refusal(api: ApiService, obj: Service) -> str:
    with pytest.raises(errors.InvalidError) as caught:
        api.create(obj)
    return caught.value.status.message or ""


def test_dynamic_addresses_come_from_the_upper_band_and_requested_ones_are_honoured(api):
    # ipallocator: the lower min(max(16, size/16), 256) addresses are for static requests.
    created = api.create(svc("web"))
    assert created.spec.cluster_ips == (created.spec.cluster_ip,)
    assert ServiceIPRange().contains(created.spec.cluster_ip)
    assert not created.spec.cluster_ip.startswith("10.96.0.")
    assert created.spec.ip_families == ("IPv4",)
    assert created.spec.ip_family_policy == "SingleStack"
    fixed = api.create(svc("dns", clusterIP="10.96.0.10"))
    assert fixed.spec.cluster_ips == ("10.96.0.10",)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            {"clusterIP": "10.96.0.10"},
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to '
            "allocate IP 10.96.0.10: provided IP is already allocated",
        ),
        (
            {"clusterIP": "192.168.1.1"},
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.1.1"}: failed to '
            "allocate IP 192.168.1.1: provided IP is not in the valid range. The range of valid "
            "IPs is 10.96.0.0/12",
        ),
        (
            {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]},
            'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port '
            "is already allocated",
        ),
        (
            {"type": "NodePort", "ports": [{"port": 80, "nodePort": 8080}]},
            'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is '
            "not in the valid range. The range of valid ports is 30000-32767",
        ),
    ],
    ids=["ip-taken", "ip-out-of-range", "port-taken", "port-out-of-range"],
)
def test_taken_or_foreign_values_are_refused_with_upstreams_text(api, second, message):
    api.create(
        svc("a", clusterIP="10.96.0.10", type="NodePort", ports=[{"port": 80, "nodePort": 30080}])
    )
    assert refusal(api, svc("b", **second)) == message


def test_a_refused_write_gives_back_what_it_took(api):
    # A NodePort Service whose second node port is taken: its cluster IP and first port return.
    api.create(svc("a", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    bad = svc("b", clusterIP="10.96.0.20", type="NodePort",
              ports=[{"name": "x", "port": 81, "nodePort": 30081}, {"name": "y", "port": 82, "nodePort": 30080}])  # fmt: skip
    refusal(api, bad)
    assert not api.services.ips.allocated("10.96.0.20")
    assert not api.services.node_ports.allocated(30081)


def test_delete_and_type_changes_release_values(api):
    created = api.create(svc("a", type="NodePort", clusterIP="10.96.0.30"))
    port = created.spec.ports[0].node_port
    assert 30000 <= port <= 32767
    api.patch(Service, "a", {"spec": {"type": "ClusterIP"}}, namespace="default",
              patch_type=PatchType.STRATEGIC_MERGE_PATCH)  # fmt: skip
    assert not api.services.node_ports.allocated(port)
    assert api.get(Service, "a", "default").spec.ports[0].node_port is None
    api.delete(Service, "a", "default")
    assert not api.services.ips.allocated("10.96.0.30")
    assert api.create(svc("b", clusterIP="10.96.0.30")).spec.cluster_ip == "10.96.0.30"


def test_a_replace_without_allocated_values_keeps_them(api):
    # patchAllocatedValues: a PUT that leaves out clusterIP and nodePort keeps them.
    created = api.create(svc("a", type="NodePort"))
    bare = svc("a", type="NodePort")
    updated = api.update(
        evolve(
            bare, metadata=evolve(bare.metadata, resource_version=created.metadata.resource_version)
        )
    )
    assert updated.spec.cluster_ip == created.spec.cluster_ip
    assert updated.spec.ports[0].node_port == created.spec.ports[0].node_port


def test_headless_and_external_name_services_take_nothing(api):
    headless = api.create(svc("h", clusterIP="None", selector={"a": "b"}))
    assert headless.spec.cluster_ips == ("None",)
    external = api.create(svc("e", type="ExternalName", externalName="db.example.com", ports=None))
    assert external.spec.cluster_ip is None
    assert external.spec.ip_families is None


def test_allocations_are_rebuilt_from_stored_services(store, clock):
    # The repair controllers: a new API service over the same store knows what is taken.
    first = ApiService(store, clock=clock, rng=random.Random(1))
    first.create(
        svc("a", clusterIP="10.96.0.40", type="NodePort", ports=[{"port": 80, "nodePort": 30090}])
    )
    second = ApiService(store, clock=clock, rng=random.Random(2))
    assert second.services.ips.allocated("10.96.0.40")
    assert second.services.node_ports.allocated(30090)


def test_a_full_range_is_an_internal_error(api):
    api.use_service_ranges("10.0.0.0/30", "30000-30001")
    api.create(svc("a"))
    api.create(svc("b"))
    with pytest.raises(errors.InternalError) as caught:
        api.create(svc("c"))
    assert (
        caught.value.status.message
        == "Internal error occurred: failed to allocate a serviceIP: range is full"
    )
    assert NodePortRange("30000-30001").allocated(30000) is False
