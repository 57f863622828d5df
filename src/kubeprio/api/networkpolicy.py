"""networking.k8s.io/v1 NetworkPolicy: which traffic the selected pods may receive and send.

Mirrors ``k8s.io/api/networking/v1/types.go`` at v1.32: ``spec.podSelector`` picks pods
in the policy's namespace (empty: all of them); ``ingress[].from`` and ``egress[].to``
list peers (a pod selector, a namespace selector, both, or an ``ipBlock`` alone) and
``ports`` (protocol, port number or name, optional ``endPort``); ``policyTypes`` says which
directions the policy isolates. v1.32 has no ``status`` (it was removed in 1.28), so the
kind has no status subresource. kubeprio simulates no pod network: policies are stored,
listed and validated, and change nothing about scheduling. Defaults are in
``api.networkingdefaults``, validation in ``api.validation.networkpolicy``. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init, json_name

POLICY_TYPE_INGRESS: Final = "Ingress"
POLICY_TYPE_EGRESS: Final = "Egress"
POLICY_TYPES: Final = (POLICY_TYPE_INGRESS, POLICY_TYPE_EGRESS)

PROTOCOL_TCP: Final = "TCP"
PROTOCOLS: Final = (PROTOCOL_TCP, "UDP", "SCTP")

IntOrString = int | str
"""``intstr.IntOrString``: a port number or a named port."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicyPort:
    """A protocol and a port (or the range ``port``..``endPort``)."""

    protocol: str | None = None
    port: IntOrString | None = None
    end_port: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IPBlock:
    """An IP range (``cidr``) minus the ``except`` ranges inside it."""

    cidr: str | None = None
    except_: tuple[str, ...] | None = json_name("except")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicyPeer:
    """Pods (by pod and/or namespace selector) or an IP block."""

    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    ip_block: IPBlock | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicyIngressRule:
    """Traffic allowed in: from these peers, to these ports."""

    ports: tuple[NetworkPolicyPort, ...] | None = None
    from_: tuple[NetworkPolicyPeer, ...] | None = json_name("from")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicyEgressRule:
    """Traffic allowed out: to these peers, on these ports."""

    ports: tuple[NetworkPolicyPort, ...] | None = None
    to: tuple[NetworkPolicyPeer, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicySpec:
    """``spec`` of a NetworkPolicy."""

    pod_selector: LabelSelector | None = None
    ingress: tuple[NetworkPolicyIngressRule, ...] | None = None
    egress: tuple[NetworkPolicyEgressRule, ...] | None = None
    policy_types: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicy:
    """A networking.k8s.io/v1 NetworkPolicy (namespaced)."""

    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "NetworkPolicy"
    metadata: ObjectMeta = ObjectMeta()
    spec: NetworkPolicySpec | None = None
    extra: JsonDict = extra_field()
