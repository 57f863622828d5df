"""Defaulting of networking.k8s.io/v1 NetworkPolicies and IngressClasses.

Mirrors upstream v1.32 ``pkg/apis/networking/v1/defaults.go`` and its generated
``SetObjectDefaults_*``:

* ``SetDefaults_NetworkPolicy``: a policy with no ``policyTypes`` gets ``[Ingress]``, and
  ``[Ingress, Egress]`` when it has ``egress`` rules;
* ``SetDefaults_NetworkPolicyPort``: every port of every ingress and egress rule without a
  ``protocol`` gets ``TCP``;
* ``SetDefaults_IngressClass``: ``parameters`` without a ``scope`` get ``Cluster``.

Ingresses have no defaults in v1 (v1beta1 defaulted ``pathType`` to
``ImplementationSpecific``; v1 requires it). A policy always has ``spec.podSelector``
(Go's non-pointer field is always written, as ``{}`` when empty). Called by
``api.defaults.default_object``; idempotent. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from kubeprio.api.ingress import SCOPE_CLUSTER, IngressClass
from kubeprio.api.meta import LabelSelector
from kubeprio.api.model import evolve
from kubeprio.api.networkpolicy import (
    POLICY_TYPE_EGRESS,
    POLICY_TYPE_INGRESS,
    PROTOCOL_TCP,
    NetworkPolicy,
    NetworkPolicyPort,
    NetworkPolicySpec,
)


def _default_ports(
    ports: tuple[NetworkPolicyPort, ...] | None,
) -> tuple[NetworkPolicyPort, ...] | None:
    """``SetDefaults_NetworkPolicyPort`` over a rule's ports (the same tuple when none changes)."""
    if not ports or all(port.protocol is not None for port in ports):
        return ports
    return tuple(
        port if port.protocol is not None else evolve(port, protocol=PROTOCOL_TCP) for port in ports
    )


def default_network_policy(policy: NetworkPolicy) -> NetworkPolicy:
    """``SetObjectDefaults_NetworkPolicy``."""
    spec = policy.spec or NetworkPolicySpec()
    changes: dict[str, Any] = {}
    if spec.pod_selector is None:
        changes["pod_selector"] = LabelSelector()
    if not spec.policy_types:
        types = [POLICY_TYPE_INGRESS]
        if spec.egress:
            types.append(POLICY_TYPE_EGRESS)
        changes["policy_types"] = tuple(types)
    if spec.ingress:
        rules = tuple(evolve(rule, ports=_default_ports(rule.ports)) for rule in spec.ingress)
        if rules != spec.ingress:
            changes["ingress"] = rules
    if spec.egress:
        egress = tuple(evolve(rule, ports=_default_ports(rule.ports)) for rule in spec.egress)
        if egress != spec.egress:
            changes["egress"] = egress
    if not changes and policy.spec is not None:
        return policy
    return evolve(policy, spec=evolve(spec, **changes))


def default_ingress_class(ingress_class: IngressClass) -> IngressClass:
    """``SetDefaults_IngressClass``."""
    spec = ingress_class.spec
    if spec is None or spec.parameters is None or spec.parameters.scope is not None:
        return ingress_class
    parameters = evolve(spec.parameters, scope=SCOPE_CLUSTER)
    return evolve(ingress_class, spec=evolve(spec, parameters=parameters))
