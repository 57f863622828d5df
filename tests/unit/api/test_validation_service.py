"""Service validation and defaulting: upstream's ``ValidateService``/``ValidateServiceUpdate``
(``pkg/apis/core/validation/validation.go``) on objects defaulted by ``SetDefaults_Service``
(``pkg/apis/core/v1/defaults.go``), with the registry's fields (clusterIPs, families)
filled as a stored Service has them."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.defaults import default_object
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.service import Service

INFO = kinds.for_model(Service)


def service(name: str = "web", **spec: Any) -> Service:
    """A defaulted Service; ``spec`` in JSON form."""
    body = {"ports": [{"port": 80}], "selector": {"app": "web"}, **spec}
    body = {k: v for k, v in body.items() if v is not None}
    obj = from_dict(
        Service,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": body,
        },
    )
    return default_object(obj)  # type: ignore[return-value]


def messages(obj: Service) -> list[str]:
    return [str(error) for error in validation.validate_create(obj, INFO)]


def test_defaults_follow_set_defaults_service():
    # SetDefaults_Service: type, sessionAffinity, port protocol and targetPort, traffic policies.
    spec = to_dict(service(type="NodePort"))["spec"]
    assert spec["type"] == "NodePort"
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"protocol": "TCP", "port": 80, "targetPort": 80}]
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["internalTrafficPolicy"] == "Cluster"
    lb = to_dict(service(type="LoadBalancer"))["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True
    assert "externalTrafficPolicy" not in to_dict(service())["spec"]
    client_ip = to_dict(service(sessionAffinity="ClientIP"))["spec"]
    assert client_ip["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (service(), []),
        (service(clusterIP="None", ports=None, clusterIPs=["None"]), []),
        (
            service(type="ExternalName", externalName="db.example.com.", ports=None, selector=None),
            [],
        ),
        (
            service("Web_1"),
            [
                'metadata.name: Invalid value: "Web_1": a DNS-1035 label must consist of lower case '
                "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                "'[a-z]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (service(ports=[]), ["spec.ports: Required value"]),
        (
            service(ports=[{"port": 80}, {"port": 443}]),
            ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"],
        ),
        (
            service(ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81}]),
            ['spec.ports[1].name: Duplicate value: "a"'],
        ),
        (
            service(ports=[{"port": 0, "targetPort": 8080}]),
            ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"],
        ),
        (
            service(ports=[{"port": 80, "protocol": "HTTP"}]),
            [
                'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'
            ],
        ),
        (
            service(type="Bogus"),
            [
                'spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", '
                '"ExternalName", "LoadBalancer", "NodePort"'
            ],
        ),
        (
            service(ports=[{"port": 80, "nodePort": 30080}]),
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        ),
        (
            service(type="ExternalName", ports=None, selector=None),
            ["spec.externalName: Required value"],
        ),
        (
            service(clusterIP="10.96.0.300", clusterIPs=["10.96.0.300"]),
            [
                'spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, '
                "(e.g. 10.9.8.7 or 2001:db8::ffff)"
            ],
        ),
        (
            service(type="NodePort", clusterIP="None", clusterIPs=["None"]),
            [
                "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"
            ],
        ),
        (
            service(selector={"app": "-bad"}),
            [
                'spec.selector: Invalid value: "-bad": a valid label must be an empty string or '
                "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
        ),
        (
            service(ports=[{"port": 80}, {"port": 80}], clusterIP=None),
            [
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
                'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
                "AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, "
                'IntVal:0, StrVal:""}, NodePort:0}',
            ],
        ),
    ],
    ids=[
        "valid",
        "headless-without-ports",
        "external-name-trailing-dot",
        "dns1035-name",
        "ports-required",
        "names-required-with-several-ports",
        "duplicate-port-name",
        "port-range",
        "protocol-enum",
        "type-enum",
        "node-port-on-cluster-ip",
        "external-name-required",
        "cluster-ip-invalid",
        "headless-node-port",
        "selector-labels",
        "duplicate-port-protocol",
    ],
)
def test_validate_service(obj, expected):
    assert messages(obj) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"]},
            {"clusterIP": "10.96.0.11", "clusterIPs": ["10.96.0.11"]},
            ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set'],
        ),
        (
            {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"]},
            {"type": "ExternalName", "externalName": "x.example", "selector": None, "ports": None},
            [],
        ),
        (
            {"clusterIP": "None", "clusterIPs": ["None"]},
            {"clusterIP": "None", "clusterIPs": ["None"]},
            [],
        ),
    ],
    ids=["cluster-ip-immutable", "to-external-name-allowed", "headless-stays"],
)
def test_validate_service_update(old, new, expected):
    # validateUpgradeDowngradeClusterIPs: the primary clusterIP may not change, except to
    # or from ExternalName.
    before, after = service(**old), service(**new)
    found = validation.validate_update(after, before, INFO)
    assert [str(e) for e in found] == expected
