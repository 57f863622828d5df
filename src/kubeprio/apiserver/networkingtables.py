"""Table columns and cells of Ingresses, IngressClasses and NetworkPolicies.

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``ingressColumnDefinitions``/``printIngress`` with ``formatHosts``, ``formatPorts`` and
``ingressLoadBalancerStatusStringer``; ``ingressClassColumnDefinitions``/
``printIngressClass``; ``networkPolicyColumnDefinitioins``/``printNetworkPolicy``)::

    Ingress        NAME CLASS HOSTS ADDRESS PORTS AGE
    IngressClass   NAME CONTROLLER PARAMETERS AGE
    NetworkPolicy  NAME POD-SELECTOR AGE

HOSTS lists the first three rule hosts (``*`` when no rule names one) and then ``+ N
more...``; ADDRESS the load-balancer IPs or host names, sorted and distinct (the server
prints wide cells, so the 16-byte cut never applies); PORTS ``80``, or ``80, 443`` with
TLS. PARAMETERS is ``Kind.apiGroup/name``. v1.32's IngressClass table does not mark the
default class (``(default)`` came in v1.35). Who drives it: ``apiserver.tables``. Pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.ingress import Ingress, IngressClass, IngressRule
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.apiserver.tableformat import (
    NONE,
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    selector_string,
    since,
)

MAX_HOSTS: Final = 3
"""``formatHosts`` shows at most three hosts."""

INGRESS_COLUMNS: Final = (
    name_column(),
    Column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
    Column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
    Column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    Column("Ports", "string", "Ports of TLS configurations that open"),
    age_column(),
)  # fmt: skip

INGRESS_CLASS_COLUMNS: Final = (
    name_column(),
    Column("Controller", "string", "Controller that is responsible for handling this class"),
    Column("Parameters", "string", "A reference to a resource with additional parameters"),
    age_column(),
)  # fmt: skip

NETWORK_POLICY_COLUMNS: Final = (
    name_column(),
    Column("Pod-Selector", "string", "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace."),
    age_column(),
)  # fmt: skip


def format_hosts(rules: tuple[IngressRule, ...]) -> str:
    """``formatHosts``: up to three non-empty hosts, ``*`` when there are none."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == MAX_HOSTS:
            more = True
        if not more and rule.host:
            hosts.append(rule.host)
    if not hosts:
        return "*"
    text = ",".join(hosts)
    # Upstream counts the rules past the third, hosts or not.
    return f"{text} + {len(rules) - MAX_HOSTS} more..." if more else text


def print_ingress(ingress: Ingress, now: float) -> tuple[Cells, RowConditions]:
    """``printIngress``."""
    spec = ingress.spec
    class_name = spec.ingress_class_name if spec is not None else None
    status = ingress.status
    balancer = status.load_balancer if status is not None else None
    addresses = sorted(
        {
            entry.ip or entry.hostname or ""
            for entry in (balancer.ingress if balancer else None) or ()
        }
        - {""}
    )
    return [
        ingress.metadata.name or "",
        NONE if class_name is None else class_name,
        format_hosts((spec.rules if spec is not None else None) or ()),
        ",".join(addresses),
        "80, 443" if spec is not None and spec.tls else "80",
        since(ingress.metadata.creation_timestamp, now),
    ], None


def print_ingress_class(ingress_class: IngressClass, now: float) -> tuple[Cells, RowConditions]:
    """``printIngressClass``: PARAMETERS ``Kind[.apiGroup]/name`` or ``<none>``."""
    spec = ingress_class.spec
    parameters = NONE
    if spec is not None and spec.parameters is not None:
        params = spec.parameters
        parameters = params.kind or ""
        if params.api_group is not None:
            parameters += f".{params.api_group}"
        parameters += f"/{params.name or ''}"
    return [
        ingress_class.metadata.name or "",
        (spec.controller if spec is not None else None) or "",
        parameters,
        since(ingress_class.metadata.creation_timestamp, now),
    ], None


def print_network_policy(policy: NetworkPolicy, now: float) -> tuple[Cells, RowConditions]:
    """``printNetworkPolicy``: the pod selector as ``metav1.FormatLabelSelector`` prints it."""
    selector = policy.spec.pod_selector if policy.spec is not None else None
    return [
        policy.metadata.name or "",
        selector_string(selector),
        since(policy.metadata.creation_timestamp, now),
    ], None
