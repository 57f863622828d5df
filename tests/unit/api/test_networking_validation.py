"""Ingress, IngressClass and NetworkPolicy validation through the API service: the field
paths and texts of upstream v1.32 ``pkg/apis/networking/validation/validation.go``
(``ValidateIngressCreate``/``ValidateIngressUpdate``/``ValidateIngressStatusUpdate``,
``ValidateIngressClass``/``ValidateIngressClassUpdate``, ``ValidateNetworkPolicy``/
``ValidateIngressUpdate``, ``ValidateIPBlock``) and of the apimachinery v0.32 helpers
they call (``IsWildcardDNS1123Subdomain``, ``IsDomainPrefixedPath``, ``IsValidCIDR``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.errors import InvalidError
from kubeprio.api.ingress import (
    Ingress,
    IngressClass,
    IngressLoadBalancerIngress,
    IngressLoadBalancerStatus,
    IngressStatus,
)
from kubeprio.api.model import evolve
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.apiserver.service import ApiService

DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
WILDCARD = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which "
    "must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric "
    "character (e.g. '*.example.com', regex used for validation is "
    "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def backend(name: str = "web", **port: Any) -> dict[str, Any]:
    return {"service": {"name": name, "port": port or {"number": 80}}}


def http_path(path: str = "/", path_type: str | None = "Prefix", **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "backend": backend(), **fields}
    if path_type is not None:
        entry["pathType"] = path_type
    return entry


def rule(*paths: dict[str, Any], host: str = "web.example.com") -> dict[str, Any]:
    return {"host": host, "http": {"paths": list(paths) or [http_path()]}}


def ingress(spec: dict[str, Any], **metadata: Any) -> Ingress:
    return serialization.from_dict(
        Ingress,
        {"metadata": {"name": "web", "namespace": "default", **metadata}, "spec": spec},
    )


def ingress_class(spec: dict[str, Any], **metadata: Any) -> IngressClass:
    return serialization.from_dict(
        IngressClass, {"metadata": {"name": "nginx", **metadata}, "spec": spec}
    )


def policy(spec: dict[str, Any]) -> NetworkPolicy:
    return serialization.from_dict(
        NetworkPolicy, {"metadata": {"name": "deny", "namespace": "default"}, "spec": spec}
    )


def causes(exc: InvalidError) -> list[str]:
    details = exc.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


def refused(api: ApiService, obj: Any) -> list[str]:
    with pytest.raises(InvalidError) as raised:
        api.create(obj)
    return causes(raised.value)


# --- Ingress ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "metadata", "expected"),
    [
        (
            {},
            {},
            ["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or "
             "`rules` must be specified"],
        ),
        (
            {"rules": [rule(http_path(path_type=None))]},
            {},
            ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"],
        ),
        (
            {"rules": [rule(http_path(path_type="Regex"))]},
            {},
            ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported '
             'values: "Exact", "ImplementationSpecific", "Prefix"'],
        ),
        (
            {"rules": [rule(http_path("a//b/.."))]},
            {},
            ['spec.rules[0].http.paths[0].path: Invalid value: "a//b/..": must be an absolute path',
             "spec.rules[0].http.paths[0].path: Invalid value: \"a//b/..\": must not contain '//'",
             "spec.rules[0].http.paths[0].path: Invalid value: \"a//b/..\": cannot end with '/..'"],
        ),
        (
            {"rules": [rule(http_path("/a/%2Fb", path_type="Exact"))]},
            {},
            ["spec.rules[0].http.paths[0].path: Invalid value: \"/a/%2Fb\": must not contain '%2F'"],
        ),
        (
            # ImplementationSpecific: only an absolute path when one is given.
            {"rules": [rule(http_path("", "ImplementationSpecific"),
                            http_path("x", "ImplementationSpecific"))]},
            {},
            ['spec.rules[0].http.paths[1].path: Invalid value: "x": must be an absolute path'],
        ),
        (
            {"rules": [rule(host="10.0.0.1"), rule(host="*.*.example.com"), rule(host="Web")]},
            {},
            ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
             f'spec.rules[1].host: Invalid value: "*.*.example.com": {WILDCARD}',
             f'spec.rules[2].host: Invalid value: "Web": {SUBDOMAIN}'],
        ),
        (
            {"rules": [{"host": "a.example.com", "http": {"paths": []}}]},
            {},
            ["spec.rules[0].http.paths: Required value"],
        ),
        (
            {"defaultBackend": {"service": {"name": "1web", "port": {"number": 70000}}}},
            {},
            [f'spec.defaultBackend.service.name: Invalid value: "1web": {DNS1035}',
             "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 "
             "and 65535, inclusive"],
        ),
        (
            {"defaultBackend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}},
            {},
            ['spec.defaultBackend: Invalid value: "": cannot set both port name & port number'],
        ),
        (
            {"defaultBackend": {"service": {"name": "web", "port": {}}}},
            {},
            ["spec.defaultBackend: Required value: port name or number is required"],
        ),
        (
            {"defaultBackend": {"service": {"name": "web", "port": {"name": "Http"}}}},
            {},
            ['spec.defaultBackend.service.port.name: Invalid value: "Http": must contain only '
             "alpha-numeric characters (a-z, 0-9), and hyphens (-)"],
        ),
        (
            {"defaultBackend": {}},
            {},
            ['spec.defaultBackend: Invalid value: "": resource or service backend is required'],
        ),
        (
            {"defaultBackend": {**backend(), "resource": {"kind": "Bucket", "name": "b"}}},
            {},
            ['spec.defaultBackend: Invalid value: "": cannot set both resource and service backends'],
        ),
        (
            {"defaultBackend": {"resource": {"apiGroup": "Ex", "kind": "a/b"}}},
            {},
            [f'spec.defaultBackend.resource.apiGroup: Invalid value: "Ex": {SUBDOMAIN}',
             "spec.defaultBackend.resource.kind: Invalid value: \"a/b\": may not contain '/'",
             "spec.defaultBackend.resource.name: Required value"],
        ),
        (
            {"defaultBackend": backend(),
             "tls": [{"hosts": ["*.example.com", "b*.example.com"], "secretName": "Tls_Cert"}]},
            {},
            [f'spec.tls[0].hosts[1]: Invalid value: "b*.example.com": {WILDCARD}',
             f'spec.tls[0].secretName: Invalid value: "Tls_Cert": {SUBDOMAIN}'],
        ),
        (
            {"defaultBackend": backend(), "ingressClassName": "Nginx"},
            {},
            [f'spec.ingressClassName: Invalid value: "Nginx": {SUBDOMAIN}'],
        ),
        (
            {"defaultBackend": backend(), "ingressClassName": "nginx"},
            {"annotations": {"kubernetes.io/ingress.class": "traefik"}},
            ['annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match '
             "`ingressClassName` when both are specified"],
        ),
    ],
    ids=[
        "no-rules-no-backend", "no-path-type", "unknown-path-type", "prefix-path-rules",
        "encoded-slash", "implementation-specific", "hosts", "no-paths", "service-name-and-port",
        "port-name-and-number", "no-port", "port-name", "no-backend", "two-backends",
        "resource-backend", "tls", "class-name", "annotation-mismatch",
    ],
)  # fmt: skip
def test_ingress_create_errors(
    api: ApiService, spec: dict[str, Any], metadata: dict[str, Any], expected: list[str]
) -> None:
    assert refused(api, ingress(spec, **metadata)) == expected


def test_a_valid_ingress_is_stored_with_an_empty_status_and_generation_one(api: ApiService) -> None:
    """ingressStrategy.PrepareForCreate: the status is reset, generation 1; v1 has no
    pathType default (SetDefaults in v1beta1 only)."""
    sent = evolve(
        ingress(
            {
                "rules": [rule(http_path("/", "Exact"), host="*.example.com"), {"host": "bare.io"}],
                "tls": [{"hosts": ["web.example.com"], "secretName": "tls"}],
            }
        ),
        status=IngressStatus(
            load_balancer=IngressLoadBalancerStatus(
                ingress=(IngressLoadBalancerIngress(ip="1.2.3.4"),)
            )
        ),
    )
    created = api.create(sent)
    data = serialization.to_dict(created)
    assert data["status"] == {"loadBalancer": {}}
    assert created.metadata.generation == 1
    assert data["spec"]["rules"][0]["http"]["paths"][0]["pathType"] == "Exact"


def test_ingress_update_bumps_generation_on_spec_change_and_keeps_the_status(
    api: ApiService,
) -> None:
    created = api.create(ingress({"defaultBackend": backend()}))
    status = IngressStatus(
        load_balancer=IngressLoadBalancerStatus(
            ingress=(IngressLoadBalancerIngress(ip="10.0.0.9"),)
        )
    )
    with_status = api.update_status(evolve(created, status=status))
    assert with_status.status == status
    assert with_status.metadata.generation == 1
    changed = api.update(evolve(with_status, spec=ingress({"defaultBackend": backend("api")}).spec))
    assert changed.metadata.generation == 2
    assert changed.status == status


def test_ingress_status_update_errors(api: ApiService) -> None:
    """ValidateIngressLoadBalancerStatus (v1.32: IsValidIP, then the host-name rules)."""
    created = api.create(ingress({"defaultBackend": backend()}))
    bad = IngressStatus(
        load_balancer=IngressLoadBalancerStatus(
            ingress=(
                IngressLoadBalancerIngress(ip="300.1.1.1"),
                IngressLoadBalancerIngress(hostname="10.0.0.1"),
                IngressLoadBalancerIngress(ip="010.0.0.1", hostname="lb.example.com"),
            )
        )
    )
    with pytest.raises(InvalidError) as raised:
        api.update_status(evolve(created, status=bad))
    assert causes(raised.value) == [
        'status.loadBalancer.ingress[0].ip: Invalid value: "300.1.1.1": must be a valid IP '
        "address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        'status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.1": must be a DNS name, '
        "not an IP address",
    ]


def test_ingress_update_keeps_accepting_a_stored_invalid_secret_name(
    api: ApiService, store: Any
) -> None:
    """allowInvalidSecretName: only when the stored object already had one; the annotation
    check runs on create only."""
    from kubeprio.store.interface import ObjectKey

    stored = ingress({"defaultBackend": backend(), "tls": [{"secretName": "Old_Name"}]})
    stored = evolve(
        stored,
        metadata=evolve(
            stored.metadata, uid="u1", creation_timestamp="2024-01-01T00:00:00Z", generation=1
        ),
    )
    store.create(ObjectKey("ingresses", "default", "web"), stored)
    current = api.get(Ingress, "web", namespace="default")
    labelled = evolve(current, metadata=evolve(current.metadata, labels={"a": "b"}))
    assert api.update(labelled).metadata.labels == {"a": "b"}
    fresh = api.create(ingress({"defaultBackend": backend()}, name="other"))
    bad = evolve(
        fresh, spec=ingress({"defaultBackend": backend(), "tls": [{"secretName": "Bad_"}]}).spec
    )
    with pytest.raises(InvalidError) as raised:
        api.update(bad)
    assert causes(raised.value) == [f'spec.tls[0].secretName: Invalid value: "Bad_": {SUBDOMAIN}']


# --- IngressClass ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, ["spec.controller: Required value"]),
        (
            {"controller": "ingress-nginx"},
            ['spec.controller: Invalid value: "ingress-nginx": must be a domain-prefixed path '
             '(such as "acme.io/foo")'],
        ),
        (
            {"controller": "Example.com/x y"},
            [f'spec.controller: Invalid value: "Example.com": {SUBDOMAIN}',
             "spec.controller: Invalid value: \"x y\": Invalid path (regex used for validation is "
             "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"],
        ),
        (
            {"controller": "example.com/" + "c" * 250},
            ["spec.controller: Too long: may not be more than 250 bytes"],
        ),
        (
            {"controller": "example.com/c",
             "parameters": {"kind": "..", "name": "a%b", "scope": "Namespace"}},
            ["spec.parameters.kind: Invalid value: \"..\": may not be '..'",
             "spec.parameters.name: Invalid value: \"a%b\": may not contain '%'",
             "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"],
        ),
        (
            {"controller": "example.com/c",
             "parameters": {"kind": "K", "name": "n", "scope": "Cluster", "namespace": "x"}},
            ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"],
        ),
        (
            {"controller": "example.com/c",
             "parameters": {"kind": "K", "name": "n", "scope": "Global"}},
            ['spec.parameters.scope: Unsupported value: "Global": supported values: "Cluster", '
             '"Namespace"'],
        ),
    ],
    ids=["no-controller", "not-domain-prefixed", "bad-host-and-path", "too-long",
         "namespace-scope-needs-namespace", "cluster-scope-no-namespace", "unknown-scope"],
)  # fmt: skip
def test_ingress_class_errors(api: ApiService, spec: dict[str, Any], expected: list[str]) -> None:
    assert refused(api, ingress_class(spec)) == expected


def test_ingress_class_parameters_default_to_cluster_scope_and_controller_is_immutable(
    api: ApiService,
) -> None:
    """SetDefaults_IngressClass; validateIngressClassSpecUpdate (ValidateImmutableField)."""
    created = api.create(
        ingress_class(
            {"controller": "k8s.io/ingress-nginx", "parameters": {"kind": "K", "name": "n"}}
        )
    )
    assert created.spec is not None
    assert created.spec.parameters is not None
    assert created.spec.parameters.scope == "Cluster"
    assert created.metadata.generation == 1
    moved = evolve(created, spec=evolve(created.spec, controller="example.com/other"))
    with pytest.raises(InvalidError) as raised:
        api.update(moved)
    assert causes(raised.value) == [
        'spec.controller: Invalid value: "example.com/other": field is immutable'
    ]


# --- NetworkPolicy -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"ingress": [{"from": [{}]}]},
            ["spec.ingress[0].from[0]: Required value: must specify a peer"],
        ),
        (
            {"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]},
            ["spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"],
        ),
        (
            {"ingress": [{"from": [{"ipBlock": {"cidr": ""}}]}]},
            ["spec.ingress[0].from[0].ipBlock.cidr: Required value"],
        ),
        (
            {"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]},
            [f'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": {CIDR}'],
        ),
        (
            {"ingress": [{"from": [{"ipBlock": {
                "cidr": "10.0.0.0/16",
                "except": ["10.0.1.0/24", "10.1.0.0/24", "10.0.0.0/16", "10.0.0.0/8", "x",
                           "fd00::/64"]}}]}]},
            ['spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "10.1.0.0/24": must be '
             "a strict subset of `cidr`",
             'spec.ingress[0].from[0].ipBlock.except[2]: Invalid value: "10.0.0.0/16": must be '
             "a strict subset of `cidr`",
             'spec.ingress[0].from[0].ipBlock.except[3]: Invalid value: "10.0.0.0/8": must be '
             "a strict subset of `cidr`",
             f'spec.ingress[0].from[0].ipBlock.except[4]: Invalid value: "x": {CIDR}',
             'spec.ingress[0].from[0].ipBlock.except[5]: Invalid value: "fd00::/64": must be '
             "a strict subset of `cidr`"],
        ),
        (
            {"ingress": [{"ports": [{"protocol": "ICMP", "port": 0}, {"port": 80, "endPort": 79},
                                    {"port": "http", "endPort": 90}, {"endPort": 90},
                                    {"port": "Web--1"}]}]},
            ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: '
             '"TCP", "UDP", "SCTP"',
             "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
             "spec.ingress[0].ports[1].endPort: Invalid value: 79: must be greater than or equal "
             "to `port`",
             "spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when "
             "`port` is non-numeric",
             "spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when "
             "`port` is not specified",
             'spec.ingress[0].ports[4].port: Invalid value: "Web--1": must contain only '
             "alpha-numeric characters (a-z, 0-9), and hyphens (-)",
             'spec.ingress[0].ports[4].port: Invalid value: "Web--1": must not contain '
             "consecutive hyphens"],
        ),
        (
            {"policyTypes": ["Ingress", "Sideways"]},
            ['spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", '
             '"Egress"'],
        ),
        (
            {"policyTypes": ["Ingress", "Egress", "Ingress"]},
            ['spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", '
             '"Ingress"}: may not specify more than two policyTypes'],
        ),
        (
            {"podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
            ["spec.podSelector.matchExpressions[0].values: Required value: must be specified "
             "when `operator` is 'In' or 'NotIn'"],
        ),
    ],
    ids=["empty-peer", "ipblock-and-selector", "no-cidr", "bad-cidr", "except-not-inside",
         "ports", "unknown-policy-type", "three-policy-types", "selector"],
)  # fmt: skip
def test_network_policy_errors(api: ApiService, spec: dict[str, Any], expected: list[str]) -> None:
    assert refused(api, policy(spec)) == expected


@pytest.mark.parametrize(
    "cidr",
    ["10.0.0.1/8", "010.0.0.0/8", "10.0.0.0/08", "::ffff:10.0.0.0/104", "2001:db8::1/64"],
)
def test_v132_accepts_cidrs_that_parse_sloppily(api: ApiService, cidr: str) -> None:
    """v1.32's IsValidCIDR only asks ParseCIDRSloppy: host bits and leading zeros pass
    (the strict forms came with v1.33's StrictIPCIDRValidation)."""
    created = api.create(policy({"ingress": [{"from": [{"ipBlock": {"cidr": cidr}}]}]}))
    assert created.spec is not None


@pytest.mark.parametrize(
    ("spec", "policy_types", "protocols"),
    [
        ({}, ["Ingress"], []),
        ({"ingress": [{"ports": [{"port": 80}]}]}, ["Ingress"], ["TCP"]),
        ({"egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53}]}]},
         ["Ingress", "Egress"], ["UDP", "TCP"]),
        ({"egress": [{}], "policyTypes": ["Egress"]}, ["Egress"], []),
    ],
    ids=["empty", "ingress-port", "egress", "explicit"],
)  # fmt: skip
def test_network_policy_defaults(
    api: ApiService, spec: dict[str, Any], policy_types: list[str], protocols: list[str]
) -> None:
    """SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort; podSelector is always
    written ({} when empty)."""
    data = serialization.to_dict(api.create(policy(spec)))
    assert data["spec"]["podSelector"] == {}
    assert data["spec"]["policyTypes"] == policy_types
    rules = data["spec"].get("ingress", []) + data["spec"].get("egress", [])
    assert [port["protocol"] for r in rules for port in r.get("ports", [])] == protocols


def test_network_policy_update_keeps_a_stored_invalid_selector_value(
    api: ApiService, store: Any
) -> None:
    """ValidationOptionsForNetworking: invalid label values stay allowed on update when the
    stored pod selector already has them."""
    from kubeprio.store.interface import ObjectKey

    invalid = {
        "podSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x-"]}]}
    }
    stored = policy(invalid)
    stored = evolve(
        stored,
        metadata=evolve(
            stored.metadata, uid="u1", creation_timestamp="2024-01-01T00:00:00Z", generation=1
        ),
    )
    store.create(ObjectKey("networkpolicies", "default", "deny"), stored)
    current = api.get(NetworkPolicy, "deny", namespace="default")
    updated = api.update(evolve(current, metadata=evolve(current.metadata, labels={"a": "b"})))
    assert updated.metadata.labels == {"a": "b"}
    with pytest.raises(InvalidError):
        api.create(policy(invalid))
