"""Service validation (core/v1), as upstream ``ValidateService``/``ValidateServiceUpdate``.

Mirrors ``pkg/apis/core/validation/validation.go``: the name is a DNS-1035 label (in
``validation.meta``); ports are required unless the Service is headless or ExternalName,
named (DNS-1123 labels, unique) when there are several, with valid numbers, a supported
protocol and a valid target port; the type and session affinity are known; ExternalName
needs ``externalName`` and no cluster IPs or families; ``clusterIP``/``clusterIPs`` agree
(``ValidateServiceClusterIPsRelatedFields``, also run by the registry before it
allocates); ``nodePort`` is forbidden on ClusterIP Services and unique per protocol;
(port, protocol) pairs are unique; traffic policies are set where they apply. Updates
add ``validateUpgradeDowngradeClusterIPs``/``IPFamilies`` (the first cluster IP may not
change, except to or from ExternalName), the load-balancer class and the health-check
node port rules. Paths, values and texts are upstream's, including its quirks
(``spec.LoadBalancerSourceRanges``, a top-level ``allocateLoadBalancerNodePorts``).

Left out: ``trafficDistribution`` (its allowed values follow feature gates) and the
load-balancer status ``ipMode`` and ``ports`` rules. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.gosyntax import GoPointer, GoSlice, GoStruct, int_or_string, string_slice
from kubeprio.api.service import (
    AFFINITY_CLIENT_IP,
    AFFINITY_NONE,
    CLUSTER_IP_NONE,
    IPV4,
    IPV6,
    SERVICE_TYPE_CLUSTER_IP,
    SERVICE_TYPE_EXTERNAL_NAME,
    SERVICE_TYPE_LOAD_BALANCER,
    SERVICE_TYPE_NODE_PORT,
    Service,
    ServicePort,
    ServiceSpec,
    ServiceStatus,
    externally_accessible,
    is_headless,
    needs_health_check,
)
from kubeprio.api.validation.ip import cidr_errors, ip_errors, non_special_ip_errors, parse_ip
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
    validate_labels,
)
from kubeprio.api.validation.podspec import PORT_PROTOCOLS, port_name_errors, port_number_errors

SERVICE_TYPES: Final = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
AFFINITIES: Final = ("ClientIP", "None")
IP_FAMILIES: Final = ("IPv4", "IPv6")
IP_FAMILY_POLICIES: Final = ("PreferDualStack", "RequireDualStack", "SingleStack")
TRAFFIC_POLICIES: Final = ("Cluster", "Local")
MAX_CLIENT_IP_AFFINITY_SECONDS: Final = 86400
TOPOLOGY_MODE: Final = "service.kubernetes.io/topology-mode"
TOPOLOGY_HINTS: Final = "service.kubernetes.io/topology-aware-hints"
SOURCE_RANGES_ANNOTATION: Final = "service.beta.kubernetes.io/load-balancer-source-ranges"
ONLY_LOAD_BALANCER: Final = "may only be used when `type` is 'LoadBalancer'"
MAY_NOT_CHANGE: Final = "may not change once set"


def port_num_or_name_errors(value: int | str, path: str) -> list[FieldError]:
    """``ValidatePortNumOrName``: a valid port number, or an IANA port name."""
    if isinstance(value, int):
        return [errors.invalid(path, value, m) for m in port_number_errors(value)]
    return [errors.invalid(path, value, m) for m in port_name_errors(value)]


def _internal_port_value(port: ServicePort) -> GoStruct:
    """The ``core.ServicePort{Protocol, Port}`` key upstream reports, every other field zero."""
    return GoStruct(
        "core.ServicePort",
        (
            ("Name", ""),
            ("Protocol", port.protocol or ""),
            ("AppProtocol", GoPointer("*string")),
            ("Port", port.port or 0),
            ("TargetPort", int_or_string(0)),
            ("NodePort", 0),
        ),
    )


def _validate_port(
    port: ServicePort, path: str, *, require_name: bool, names: set[str]
) -> list[FieldError]:
    """``validateServicePort``."""
    found: list[FieldError] = []
    if require_name and not port.name:
        found.append(errors.required(f"{path}.name"))
    elif port.name:
        found.extend(
            errors.invalid(f"{path}.name", port.name, m) for m in dns1123_label_errors(port.name)
        )
        if port.name in names:
            found.append(errors.duplicate(f"{path}.name", port.name))
        else:
            names.add(port.name)
    found.extend(
        errors.invalid(f"{path}.port", port.port or 0, m)
        for m in port_number_errors(port.port or 0)
    )
    if not port.protocol:
        found.append(errors.required(f"{path}.protocol"))
    elif port.protocol not in PORT_PROTOCOLS:
        found.append(errors.not_supported(f"{path}.protocol", port.protocol, PORT_PROTOCOLS))
    target = port.target_port if port.target_port is not None else 0
    found.extend(port_num_or_name_errors(target, f"{path}.targetPort"))
    if port.app_protocol is not None:
        found.extend(qualified_name_errors(port.app_protocol, f"{path}.appProtocol"))
    return found


def _validate_affinity_config(config: Any, path: str) -> list[FieldError]:
    """``validateClientIPAffinityConfig`` (``sessionAffinityConfig`` is unmodelled: JSON)."""
    needed = f"when session affinity type is {AFFINITY_CLIENT_IP}"
    if not isinstance(config, dict):
        return [errors.required(path, needed)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [errors.required(f"{path}.clientIP", needed)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [errors.required(f"{path}.clientIP.timeoutSeconds", needed)]
    if not isinstance(timeout, int) or not 0 < timeout <= MAX_CLIENT_IP_AFFINITY_SECONDS:
        return [
            errors.invalid(
                f"{path}.clientIP.timeoutSeconds",
                timeout,
                f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}",
            )
        ]
    return []


def cluster_ips_related_errors(spec: ServiceSpec) -> list[FieldError]:
    """``ValidateServiceClusterIPsRelatedFields``: clusterIP(s), ipFamilies, ipFamilyPolicy."""
    if spec.type == SERVICE_TYPE_EXTERNAL_NAME:
        return []
    found: list[FieldError] = []
    cluster_ips = list(spec.cluster_ips or ())
    if spec.cluster_ip:
        if not cluster_ips:
            found.append(errors.required("spec.clusterIPs"))
        elif cluster_ips[0] != spec.cluster_ip:
            found.append(
                errors.invalid(
                    "spec.clusterIPs",
                    string_slice(cluster_ips),
                    "first value must match `clusterIP`",
                )
            )
    elif cluster_ips:
        found.append(
            errors.invalid(
                "spec.clusterIPs",
                string_slice(cluster_ips),
                "must be empty when `clusterIP` is not specified",
            )
        )
    seen: set[str] = set()
    for position, family in enumerate(spec.ip_families or ()):
        path = f"spec.ipFamilies[{position}]"
        if family not in IP_FAMILIES:
            found.append(errors.not_supported(path, family, IP_FAMILIES))
        if family in seen:
            found.append(errors.duplicate(path, family))
        seen.add(family)
    policy = spec.ip_family_policy
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        found.append(errors.not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    invalid_ips = False
    for position, address in enumerate(cluster_ips):
        if position == 0 and address == CLUSTER_IP_NONE:
            if len(cluster_ips) > 1:
                invalid_ips = True
                found.append(
                    errors.invalid(
                        "spec.clusterIPs", cluster_ips, "'None' must be the first and only value"
                    )
                )
            continue
        ip_found = ip_errors(address, f"spec.clusterIPs[{position}]")
        invalid_ips = invalid_ips or bool(ip_found)
        found.extend(ip_found)
    if len(cluster_ips) > 2:
        found.append(
            errors.invalid(
                "spec.clusterIPs", string_slice(cluster_ips), "may only hold up to 2 values"
            )
        )
    if invalid_ips:
        return found
    if len(cluster_ips) > 1 and len({_family_of(a) for a in cluster_ips}) != len(cluster_ips):
        found.append(
            errors.invalid(
                "spec.clusterIPs", cluster_ips, "may specify no more than one IP for each IP family"
            )
        )
    if not is_headless(spec) and cluster_ips and spec.ip_families:
        for position, (address, family) in enumerate(
            zip(cluster_ips, spec.ip_families, strict=False)
        ):
            actual = _family_of(address)
            if family in (IPV4, IPV6) and actual != family:
                found.append(
                    errors.invalid(
                        f"spec.clusterIPs[{position}]",
                        address,
                        f"expected an {family} value as indicated by `ipFamilies[{position}]`",
                    )
                )
    return found


def _family_of(address: str) -> str:
    parsed = parse_ip(address)
    return IPV6 if parsed is not None and parsed.version == 6 else IPV4


def _validate_type_rules(spec: ServiceSpec) -> list[FieldError]:
    """The ``switch service.Spec.Type`` block of ``ValidateService``."""
    found: list[FieldError] = []
    if spec.type in (SERVICE_TYPE_LOAD_BALANCER, SERVICE_TYPE_NODE_PORT) and is_headless(spec):
        found.append(
            errors.invalid(
                "spec.clusterIPs[0]",
                CLUSTER_IP_NONE,
                f"may not be set to 'None' for {spec.type} services",
            )
        )
    elif spec.type == SERVICE_TYPE_EXTERNAL_NAME:
        for present, path in (
            (bool(spec.cluster_ips), "spec.clusterIPs"),
            (bool(spec.ip_families), "spec.ipFamilies"),
            (spec.ip_family_policy is not None, "spec.ipFamilyPolicy"),
        ):
            if present:
                found.append(errors.forbidden(path, "may not be set for ExternalName services"))
        cname = (spec.external_name or "").removesuffix(".")
        if cname:
            found.extend(
                errors.invalid("spec.externalName", cname, m)
                for m in dns1123_subdomain_errors(cname)
            )
        else:
            found.append(errors.required("spec.externalName"))
    return found


def _validate_ports(spec: ServiceSpec) -> list[FieldError]:
    """Each port, ``nodePort`` on ClusterIP, duplicate node ports and (protocol, port) pairs."""
    found: list[FieldError] = []
    ports = spec.ports or ()
    names: set[str] = set()
    for position, port in enumerate(ports):
        found.extend(
            _validate_port(
                port, f"spec.ports[{position}]", require_name=len(ports) > 1, names=names
            )
        )
    return found


def _validate_port_uniqueness(spec: ServiceSpec) -> list[FieldError]:
    found: list[FieldError] = []
    ports = spec.ports or ()
    if spec.type == SERVICE_TYPE_CLUSTER_IP:
        found.extend(
            errors.forbidden(
                f"spec.ports[{position}].nodePort", "may not be used when `type` is 'ClusterIP'"
            )
            for position, port in enumerate(ports)
            if port.node_port
        )
    node_ports: set[tuple[str, int]] = set()
    for position, port in enumerate(ports):
        if not port.node_port:
            continue
        key = (port.protocol or "", port.node_port)
        if key in node_ports:
            found.append(errors.duplicate(f"spec.ports[{position}].nodePort", port.node_port))
        node_ports.add(key)
    pairs: set[tuple[str, int]] = set()
    for position, port in enumerate(ports):
        pair = (port.protocol or "", port.port or 0)
        if pair in pairs:
            found.append(errors.duplicate(f"spec.ports[{position}]", _internal_port_value(port)))
        pairs.add(pair)
    return found


def _validate_source_ranges(service: Service, spec: ServiceSpec) -> list[FieldError]:
    """``LoadBalancerSourceRanges`` (upstream's capitalised path) or its annotation."""
    found: list[FieldError] = []
    annotations = service.metadata.annotations or {}
    if spec.load_balancer_source_ranges:
        path = "spec.LoadBalancerSourceRanges"
        if spec.type != SERVICE_TYPE_LOAD_BALANCER:
            found.append(errors.forbidden(path, ONLY_LOAD_BALANCER))
        for position, value in enumerate(spec.load_balancer_source_ranges):
            found.extend(cidr_errors(value.strip(), f"{path}[{position}]"))
    elif SOURCE_RANGES_ANNOTATION in annotations:
        path = f"metadata.annotations[{SOURCE_RANGES_ANNOTATION}]"
        if spec.type != SERVICE_TYPE_LOAD_BALANCER:
            found.append(errors.forbidden(path, ONLY_LOAD_BALANCER))
        value = annotations[SOURCE_RANGES_ANNOTATION].strip()
        if value:
            for cidr in value.split(","):
                found.extend(cidr_errors(cidr.strip(), path))
    return found


def _validate_traffic_policies(spec: ServiceSpec) -> list[FieldError]:
    """``validateServiceExternalTrafficPolicy`` and ``validateServiceInternalTrafficFieldsValue``."""
    found: list[FieldError] = []
    external = spec.external_traffic_policy
    if not externally_accessible(spec):
        if external:
            found.append(
                errors.invalid(
                    "spec.externalTrafficPolicy",
                    external,
                    "may only be set for externally-accessible services",
                )
            )
    elif not external:
        found.append(errors.required("spec.externalTrafficPolicy"))
    elif external not in TRAFFIC_POLICIES:
        found.append(errors.not_supported("spec.externalTrafficPolicy", external, TRAFFIC_POLICIES))
    health = spec.health_check_node_port or 0
    if not needs_health_check(spec):
        if health:
            found.append(
                errors.invalid(
                    "spec.healthCheckNodePort",
                    health,
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` "
                    "is 'Local'",
                )
            )
    elif not health:
        found.append(errors.required("spec.healthCheckNodePort"))
    else:
        found.extend(
            errors.invalid("spec.healthCheckNodePort", health, m)
            for m in port_number_errors(health)
        )
    internal = spec.internal_traffic_policy
    if internal is None and spec.type in (
        SERVICE_TYPE_NODE_PORT,
        SERVICE_TYPE_LOAD_BALANCER,
        SERVICE_TYPE_CLUSTER_IP,
    ):
        found.append(errors.required("spec.internalTrafficPolicy"))
    if internal is not None and internal not in TRAFFIC_POLICIES:
        found.append(errors.not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    return found


def _validate_load_balancer_class(old: ServiceSpec | None, spec: ServiceSpec) -> list[FieldError]:
    """``validateLoadBalancerClassField``."""
    found: list[FieldError] = []
    is_lb = spec.type == SERVICE_TYPE_LOAD_BALANCER
    if (
        old is not None
        and old.type == SERVICE_TYPE_LOAD_BALANCER
        and is_lb
        and old.load_balancer_class != spec.load_balancer_class
    ):
        found.append(
            errors.invalid("spec.loadBalancerClass", spec.load_balancer_class, MAY_NOT_CHANGE)
        )
    if spec.load_balancer_class is not None:
        if is_lb:
            found.extend(qualified_name_errors(spec.load_balancer_class, "spec.loadBalancerClass"))
        else:
            found.append(errors.forbidden("spec.loadBalancerClass", ONLY_LOAD_BALANCER))
    return found


def validate_service(service: Service) -> list[FieldError]:
    """``ValidateService`` beyond object metadata (the DNS-1035 name is ``validation.meta``'s)."""
    spec = service.spec or ServiceSpec()
    found: list[FieldError] = []
    annotations = service.metadata.annotations or {}
    if (
        TOPOLOGY_MODE in annotations
        and TOPOLOGY_HINTS in annotations
        and annotations[TOPOLOGY_MODE] != annotations[TOPOLOGY_HINTS]
    ):
        found.append(
            errors.invalid(
                f"metadata.annotations[{TOPOLOGY_MODE}]",
                annotations[TOPOLOGY_MODE],
                f"must match annotations[{TOPOLOGY_HINTS}] when both are specified",
            )
        )
    if not spec.ports and not is_headless(spec) and spec.type != SERVICE_TYPE_EXTERNAL_NAME:
        found.append(errors.required("spec.ports"))
    found.extend(_validate_type_rules(spec))
    found.extend(_validate_ports(spec))
    if spec.selector is not None:
        found.extend(validate_labels(spec.selector, "spec.selector"))
    affinity = spec.session_affinity
    config = spec.extra.get("sessionAffinityConfig")
    if not affinity:
        found.append(errors.required("spec.sessionAffinity"))
    elif affinity not in AFFINITIES:
        found.append(errors.not_supported("spec.sessionAffinity", affinity, AFFINITIES))
    if affinity == AFFINITY_CLIENT_IP:
        found.extend(_validate_affinity_config(config, "spec.sessionAffinityConfig"))
    elif affinity == AFFINITY_NONE and config is not None:
        found.append(
            errors.forbidden(
                "spec.sessionAffinityConfig",
                f"must not be set when session affinity is {AFFINITY_NONE}",
            )
        )
    found.extend(cluster_ips_related_errors(spec))
    for position, address in enumerate(spec.external_ips or ()):
        path = f"spec.externalIPs[{position}]"
        ip_found = ip_errors(address, path)
        found.extend(ip_found or non_special_ip_errors(address, path))
    if not spec.type:
        found.append(errors.required("spec.type"))
    elif spec.type not in SERVICE_TYPES:
        found.append(errors.not_supported("spec.type", spec.type, SERVICE_TYPES))
    found.extend(_validate_port_uniqueness(spec))
    found.extend(_validate_source_ranges(service, spec))
    if (
        spec.allocate_load_balancer_node_ports is not None
        and spec.type != SERVICE_TYPE_LOAD_BALANCER
    ):
        found.append(errors.forbidden("spec.allocateLoadBalancerNodePorts", ONLY_LOAD_BALANCER))
    if spec.type == SERVICE_TYPE_LOAD_BALANCER and spec.allocate_load_balancer_node_ports is None:
        found.append(errors.required("allocateLoadBalancerNodePorts"))
    found.extend(_validate_load_balancer_class(None, spec))
    found.extend(_validate_traffic_policies(spec))
    return found


def _upgrade_downgrade_cluster_ips(old: ServiceSpec, new: ServiceSpec) -> list[FieldError]:
    """``validateUpgradeDowngradeClusterIPs``: the primary cluster IP is immutable."""
    if SERVICE_TYPE_EXTERNAL_NAME in (old.type, new.type):
        return []
    if is_headless(old) and is_headless(new):
        return []
    old_ips, new_ips = list(old.cluster_ips or ()), list(new.cluster_ips or ())
    found: list[FieldError] = []
    if len(old_ips) == len(new_ips):
        found.extend(
            errors.invalid(f"spec.clusterIPs[{i}]", string_slice(new.cluster_ips), MAY_NOT_CHANGE)
            for i, address in enumerate(old_ips)
            if address != new_ips[i]
        )
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            found.append(
                errors.invalid(
                    "spec.clusterIPs[0]",
                    string_slice(new.cluster_ips),
                    "primary clusterIP can not be unset",
                )
            )
        if old_ips and new_ips and new_ips[0] != old_ips[0]:
            found.append(
                errors.invalid("spec.clusterIPs[0]", string_slice(new.cluster_ips), MAY_NOT_CHANGE)
            )
        if len(new_ips) == 1 and new.ip_family_policy != "SingleStack":
            found.append(
                errors.invalid(
                    "spec.ipFamilyPolicy",
                    new.ip_family_policy,
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                )
            )
    elif old_ips and new_ips[0] != old_ips[0]:
        found.append(
            errors.invalid("spec.clusterIPs[0]", string_slice(new.cluster_ips), MAY_NOT_CHANGE)
        )
    return found


def _families_value(spec: ServiceSpec) -> GoSlice:
    """``spec.ipFamilies`` as a bad value: a ``[]core.IPFamily``, nil when unset."""
    return GoSlice("[]core.IPFamily", spec.ip_families)


def _upgrade_downgrade_families(old: ServiceSpec, new: ServiceSpec) -> list[FieldError]:
    """``validateUpgradeDowngradeIPFamilies``: the primary family is immutable."""
    if SERVICE_TYPE_EXTERNAL_NAME in (old.type, new.type):
        return []
    if is_headless(old) or is_headless(new):
        return []
    old_families, new_families = list(old.ip_families or ()), list(new.ip_families or ())
    new_ips = list(new.cluster_ips or ())
    found: list[FieldError] = []
    if len(old_families) == len(new_families):
        found.extend(
            errors.invalid("spec.ipFamilies[0]", _families_value(new), MAY_NOT_CHANGE)
            for i, family in enumerate(old_families)
            if family != new_families[i]
        )
    elif len(old_families) > len(new_families):
        if not new_ips:
            found.append(
                errors.invalid(
                    "spec.ipFamilies[0]", _families_value(new), "primary ipFamily can not be unset"
                )
            )
        if new_families and new_families[0] != old_families[0]:
            found.append(
                errors.invalid("spec.ipFamilies[0]", string_slice(new.cluster_ips), MAY_NOT_CHANGE)
            )
        if len(new_families) == 1 and new.ip_family_policy != "SingleStack":
            found.append(
                errors.invalid(
                    "spec.ipFamilyPolicy",
                    new.ip_family_policy,
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                )
            )
    elif old_families and new_families and new_families[0] != old_families[0]:
        found.append(
            errors.invalid("spec.ipFamilies[0]", string_slice(new.cluster_ips), MAY_NOT_CHANGE)
        )
    return found


def validate_service_update(new: Service, old: Service) -> list[FieldError]:
    """``ValidateServiceUpdate`` beyond object metadata."""
    new_spec, old_spec = new.spec or ServiceSpec(), old.spec or ServiceSpec()
    found = _upgrade_downgrade_cluster_ips(old_spec, new_spec)
    found.extend(_upgrade_downgrade_families(old_spec, new_spec))
    found.extend(_validate_load_balancer_class(old_spec, new_spec))
    if (
        needs_health_check(old_spec)
        and needs_health_check(new_spec)
        and new_spec.health_check_node_port != old_spec.health_check_node_port
    ):
        found.append(errors.forbidden("spec.healthCheckNodePort", "field is immutable"))
    # validate_service runs the class rule again without the old object, as upstream does
    # (a repeated cause is listed once in the message).
    found.extend(validate_service(new))
    return found


def validate_service_status_update(new: Service, old: Service) -> list[FieldError]:
    """``ValidateServiceStatusUpdate``: the load balancer's ingress addresses."""
    found: list[FieldError] = []
    status = new.status or ServiceStatus()
    balancer = status.load_balancer
    for position, ingress in enumerate((balancer.ingress if balancer else None) or ()):
        path = f"status.loadBalancer.ingress[{position}]"
        if ingress.ip:
            found.extend(ip_errors(ingress.ip, f"{path}.ip"))
        if ingress.hostname:
            found.extend(
                errors.invalid(f"{path}.hostname", ingress.hostname, m)
                for m in dns1123_subdomain_errors(ingress.hostname)
            )
            if parse_ip(ingress.hostname) is not None:
                found.append(
                    errors.invalid(
                        f"{path}.hostname",
                        ingress.hostname,
                        "must be a DNS name, not an IP address",
                    )
                )
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {Service: validate_service}
"""Model class -> create validator, for ``validation``'s table."""
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {Service: validate_service_update}
"""Model class -> update validator."""
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Service: validate_service_status_update
}
"""Model class -> status update validator."""
