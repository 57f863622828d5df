"""``kubectl get ing,ingressclass,netpol`` columns and cells, as upstream v1.32's printers
build them (``pkg/printers/internalversion/printers.go``: ``printIngress`` with
``formatHosts``, ``formatPorts`` and ``ingressLoadBalancerStatusStringer``;
``printIngressClass``; ``printNetworkPolicy`` with ``metav1.FormatLabelSelector``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.defaults import default_object
from kubeprio.api.ingress import Ingress, IngressClass
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.tables import build_table
from kubeprio.clock import parse_rfc3339

CREATED = "2026-01-01T00:00:00Z"
NOW = parse_rfc3339(CREATED) + 300
INGRESS = ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
INGRESS_CLASS = ["Name", "Controller", "Parameters", "Age"]
NETWORK_POLICY = ["Name", "Pod-Selector", "Age"]
BACKEND = {"service": {"name": "web", "port": {"number": 80}}}


def obj(model: type[Any], **body: Any) -> Any:
    meta = {"name": "x", "namespace": "default", "creationTimestamp": CREATED}
    return default_object(from_dict(model, {"metadata": meta, **body}))


def rules(*hosts: str) -> list[dict[str, Any]]:
    return [{"host": host} if host else {} for host in hosts]


def balancer(*entries: dict[str, str]) -> dict[str, Any]:
    return {"loadBalancer": {"ingress": list(entries)}}


@pytest.mark.parametrize(
    ("item", "columns", "cells"),
    [
        (obj(Ingress, spec={"defaultBackend": BACKEND}), INGRESS,
         ["x", "<none>", "*", "", "80", "5m"]),
        (obj(Ingress, spec={"ingressClassName": "nginx", "rules": rules("a.io", "", "b.io"),
                            "tls": [{"hosts": ["a.io"]}]}),
         INGRESS, ["x", "nginx", "a.io,b.io", "", "80, 443", "5m"]),
        (obj(Ingress, spec={"rules": rules("a.io", "b.io", "c.io", "d.io", "")}), INGRESS,
         ["x", "<none>", "a.io,b.io,c.io + 2 more...", "", "80", "5m"]),
        (obj(Ingress, spec={"rules": rules("a.io")},
             status=balancer({"ip": "10.0.0.2"}, {"hostname": "lb.example.com"},
                             {"ip": "10.0.0.1", "hostname": "ignored"}, {"ip": "10.0.0.2"})),
         INGRESS, ["x", "<none>", "a.io", "10.0.0.1,10.0.0.2,lb.example.com", "80", "5m"]),
        (obj(IngressClass, spec={"controller": "k8s.io/ingress-nginx"}), INGRESS_CLASS,
         ["x", "k8s.io/ingress-nginx", "<none>", "5m"]),
        (obj(IngressClass, spec={"controller": "example.com/c", "parameters": {
            "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "cfg"}}),
         INGRESS_CLASS, ["x", "example.com/c", "IngressParameters.k8s.example.com/cfg", "5m"]),
        (obj(IngressClass, spec={"controller": "example.com/c",
                                 "parameters": {"kind": "ConfigMap", "name": "cfg"}}),
         INGRESS_CLASS, ["x", "example.com/c", "ConfigMap/cfg", "5m"]),
        (obj(NetworkPolicy, spec={}), NETWORK_POLICY, ["x", "<none>", "5m"]),
        (obj(NetworkPolicy, spec={"podSelector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}}),
         NETWORK_POLICY, ["x", "app=web,tier in (a,b)", "5m"]),
    ],
    ids=["default-backend", "class-hosts-tls", "more-hosts", "addresses", "class",
         "class-parameters", "class-core-parameters", "all-pods", "selector"],
)  # fmt: skip
def test_columns_and_cells(item: Any, columns: list[str], cells: list[Any]) -> None:
    table = build_table(type(item), [item], now=NOW, resource_version="1")
    definitions = table["columnDefinitions"]
    assert [c["name"] for c in definitions] == columns
    assert {c["type"] for c in definitions} == {"string"}
    assert all(c["priority"] == 0 for c in definitions)
    assert table["rows"][0]["cells"] == cells
