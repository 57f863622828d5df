"""Service, Endpoints and EndpointSlice Table cells, as upstream's ``printService``,
``getServiceExternalIP``, ``makePortString``, ``formatEndpoints`` and
``printEndpointSlice`` (``pkg/printers/internalversion/printers.go``) print them."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.serialization import from_dict
from kubeprio.api.service import Service
from kubeprio.apiserver import servicetables, tables
from tests.conftest import EPOCH


def svc(spec: Any, status: Any = None) -> Service:
    body = {"metadata": {"name": "s", "namespace": "d"}, "spec": spec}
    if status is not None:
        body["status"] = status
    return from_dict(Service, body)


@pytest.mark.parametrize(
    ("service", "cells", "selector"),
    [
        (
            svc({"type": "ClusterIP", "clusterIPs": ["10.96.0.9"], "ports": [{"port": 80, "protocol": "TCP"}], "selector": {"b": "2", "a": "1"}}),
            ["ClusterIP", "10.96.0.9", "<none>", "80/TCP"],
            "a=1,b=2",
        ),
        (
            svc({"type": "NodePort", "clusterIPs": ["10.96.0.9"], "externalIPs": ["1.2.3.4"],
                 "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}),
            ["NodePort", "10.96.0.9", "1.2.3.4", "80:30080/TCP,53/UDP"],
            "<none>",
        ),
        (
            svc({"type": "LoadBalancer", "clusterIPs": ["10.96.0.9"], "ports": []}),
            ["LoadBalancer", "10.96.0.9", "<pending>", "<none>"],
            "<none>",
        ),
        (
            svc({"type": "LoadBalancer", "clusterIPs": ["10.96.0.9"]},
                {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example"}]}}),
            ["LoadBalancer", "10.96.0.9", "5.6.7.8,lb.example", "<none>"],
            "<none>",
        ),
        (
            svc({"type": "ExternalName", "externalName": "db.example.com"}),
            ["ExternalName", "<none>", "db.example.com", "<none>"],
            "<none>",
        ),
    ],
    ids=["cluster-ip", "node-port-external-ips", "load-balancer-pending", "load-balancer-ingress", "external-name"],
)  # fmt: skip
def test_service_cells(service, cells, selector):
    assert servicetables.service_cells(service) == (cells, selector)


def test_endpoints_show_three_addresses_then_how_many_more():
    endpoints = from_dict(
        Endpoints,
        {"metadata": {"name": "s"}, "subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 6)],
                                                 "ports": [{"port": 8080}]}]},
    )  # fmt: skip
    assert servicetables.endpoints_cell(endpoints) == (
        "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 2 more..."
    )
    assert (
        servicetables.endpoints_cell(from_dict(Endpoints, {"metadata": {"name": "e"}})) == "<none>"
    )


def test_endpoint_slice_row_and_columns():
    slice_ = from_dict(
        EndpointSlice,
        {"metadata": {"name": "web-x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "addressType": "IPv4",
         "ports": [{"name": "", "port": 8080}], "endpoints": [{"addresses": ["10.0.0.1"]}]},
    )  # fmt: skip
    columns, printer = tables.printer_for(EndpointSlice)
    assert [c.name for c in columns] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    cells, _ = printer(slice_, EPOCH)
    assert cells[:4] == ["web-x", "IPv4", "8080", "10.0.0.1"]
    empty = from_dict(EndpointSlice, {"metadata": {"name": "e"}, "addressType": "IPv4"})
    assert servicetables.endpoint_slice_cells(empty) == ["IPv4", "<unset>", "<unset>"]
    service_columns, _ = tables.printer_for(Service)
    assert [(c.name, c.priority) for c in service_columns] == [
        ("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0),
        ("Age", 0), ("Selector", 1),
    ]  # fmt: skip
