"""Validation of a pod spec, shared by pods and by the pod templates of workloads.

Mirrors upstream ``ValidatePodSpec`` and the functions it calls in
``pkg/apis/core/validation/validation.go`` for the fields kubeprio models (containers
and init containers with their ports and resources, restart and DNS policy, node
selector and affinity, tolerations, topology spread constraints, names of the node,
service account and priority class, preemption policy, overhead), in upstream's order,
with upstream's field paths and texts. Fields kubeprio keeps only in ``extra`` are
checked where upstream checks an enumerated value (``imagePullPolicy``,
``terminationMessagePolicy``, ``dnsPolicy``); volumes, env, probes and security
contexts are not validated.

Upstream quirks kept on purpose: pod-affinity namespace names are reported at
``...namespace`` (singular); overhead errors are reported at ``spec.overhead.limits[...]``;
an empty ``topologyKey`` gets both *Required* and the qualified-name errors.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.core import (
    Affinity,
    Container,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    PodTemplateSpec,
    ResourceList,
    Toleration,
    TopologySpreadConstraint,
)
from kubeprio.api.errors import FieldError
from kubeprio.api.meta import LabelSelector
from kubeprio.api.quantity import Quantity, QuantityError, parse_quantity
from kubeprio.api.validation.meta import (
    EXISTS_NO_VALUES,
    IN_NOT_IN_VALUES,
    NOT_A_VALID_OPERATOR,
    child,
    dns1123_label_errors,
    index,
    key,
    name_is_dns_subdomain,
    qualified_name_errors,
    validate_annotations,
    validate_label_name,
    validate_label_selector,
    validate_labels,
)

MAX_INT32: Final = 2**31 - 1
NOT_POSITIVE: Final = "must be greater than zero"
RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")  # sorted, as sets.List prints them
TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")
INIT_ONLY_WITH_ALWAYS: Final = "may not be set for init containers without restartPolicy=Always"
_INIT_FORBIDDEN_KEYS: Final = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")

# Resource names (pkg/apis/core/helper/helpers.go).
STANDARD_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
STANDARD_RESOURCES: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
        "requests.storage",
    }
)
INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
HUGEPAGES_PREFIX: Final = "hugepages-"


# --- resource names and quantities ---------------------------------------------------------


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: unprefixed or in the ``kubernetes.io/`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    """``IsHugePageResourceName``."""
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a qualified, non-native name such as ``nvidia.com/gpu``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not selectors.validate_label_key(f"requests.{name}")


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native resources except hugepages."""
    return is_native_resource(name) and not is_hugepages(name)


def is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName``: object counts and extended resources."""
    return name in INTEGER_RESOURCES or is_extended_resource(name)


def _is_standard_resource(name: str) -> bool:
    return (
        name in STANDARD_RESOURCES
        or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests.hugepages-")
    )


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    """``validateContainerResourceName`` (``validateResourceName`` plus the container rules)."""
    found = [errors.invalid(path, name, m) for m in selectors.validate_label_key(name)]
    if not found and "/" not in name and not _is_standard_resource(name):
        found.append(
            errors.invalid(path, name, "must be a standard resource type or fully qualified")
        )
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            found.append(errors.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        found.append(errors.invalid(path, name, "doesn't follow extended resource name standard"))
    return found


def validate_resource_quantity(name: str, value: Quantity, path: str) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: not negative; whole for integer resources."""
    found: list[FieldError] = []
    if value.sign() < 0:
        found.append(errors.invalid(path, str(value), "must be greater than or equal to 0"))
    if is_integer_resource(name) and value.milli_value() % 1000 != 0:
        found.append(errors.invalid(path, str(value), "must be an integer"))
    return found


def _hugepage_size(name: str) -> int | None:
    """The page size in bytes named by ``hugepages-<size>`` (``HugePageSizeFromResourceName``)."""
    try:
        size = parse_quantity(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        return None
    if size.sign() <= 0 or size.milli_value() % 1000 != 0:
        return None
    return size.value()


def _hugepage_error(name: str, value: Quantity, path: str) -> list[FieldError]:
    """``validateResourceQuantityHugePageValue``: a whole number of pages."""
    size = _hugepage_size(name)
    if size is not None and value.value() % size == 0:
        return []
    return [errors.invalid(path, str(value), f"{value} is not positive integer multiple of {name}")]


def validate_resource_requirements(
    limits: ResourceList | None, requests: ResourceList | None, path: str
) -> list[FieldError]:
    """``validateResourceRequirements`` for a container (names, quantities, requests <= limits)."""
    found: list[FieldError] = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    qos_compute = False
    hugepages = False
    limits = limits or {}
    for name in sorted(limits):
        quantity = limits[name]
        field = key(lim_path, name)
        found.extend(validate_container_resource_name(name, field))
        found.extend(validate_resource_quantity(name, quantity, field))
        if is_hugepages(name):
            hugepages = True
            found.extend(_hugepage_error(name, quantity, field))
        qos_compute = qos_compute or name in ("cpu", "memory")
    for name in sorted(requests or {}):
        quantity = (requests or {})[name]
        field = key(req_path, name)
        found.extend(validate_container_resource_name(name, field))
        found.extend(validate_resource_quantity(name, quantity, field))
        limit = limits.get(name)
        if limit is not None:
            if quantity != limit and not is_overcommit_allowed(name):
                found.append(
                    errors.invalid(
                        req_path, str(quantity), f"must be equal to {name} limit of {limit}"
                    )
                )
            elif quantity > limit:
                found.append(
                    errors.invalid(
                        req_path,
                        str(quantity),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not is_overcommit_allowed(name):
            found.append(
                errors.required(lim_path, "Limit must be set for non overcommitable resources")
            )
        if is_hugepages(name):
            hugepages = True
            found.extend(_hugepage_error(name, quantity, field))
        qos_compute = qos_compute or name in ("cpu", "memory")
    if hugepages and not qos_compute:
        found.append(errors.forbidden(path, "HugePages require cpu or memory"))
    return found


# --- containers --------------------------------------------------------------------------------


def port_name_errors(name: str) -> list[str]:
    """``IsValidPortName``: an IANA service name."""
    messages: list[str] = []
    if len(name) > 15:
        messages.append("must be no more than 15 characters")
    if not all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in name):
        messages.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any(c.isascii() and c.islower() for c in name):
        messages.append("must contain at least one letter (a-z)")
    if "--" in name:
        messages.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        messages.append("must not begin or end with a hyphen")
    return messages


def _port_number_errors(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def validate_container_ports(container: Container, path: str) -> list[FieldError]:
    """``validateContainerPorts``: names unique IANA names, numbers in range, a known protocol."""
    found: list[FieldError] = []
    names: set[str] = set()
    for position, port in enumerate(container.ports or ()):
        port_path = index(path, position)
        if port.name:
            messages = port_name_errors(port.name)
            if messages:
                found.extend(
                    errors.invalid(child(port_path, "name"), port.name, m) for m in messages
                )
            elif port.name in names:
                found.append(errors.duplicate(child(port_path, "name"), port.name))
            else:
                names.add(port.name)
        if not port.container_port:
            found.append(errors.required(child(port_path, "containerPort"), ""))
        else:
            found.extend(
                errors.invalid(child(port_path, "containerPort"), port.container_port, m)
                for m in _port_number_errors(port.container_port)
            )
        if port.host_port:
            found.extend(
                errors.invalid(child(port_path, "hostPort"), port.host_port, m)
                for m in _port_number_errors(port.host_port)
            )
        if not port.protocol:
            found.append(errors.required(child(port_path, "protocol"), ""))
        elif port.protocol not in PORT_PROTOCOLS:
            found.append(
                errors.not_supported(child(port_path, "protocol"), port.protocol, PORT_PROTOCOLS)
            )
    return found


def _enum_in_extra(
    extra: Mapping[str, Any], json_key: str, path: str, allowed: Sequence[str]
) -> list[FieldError]:
    """Check an unmodelled enumerated field kept in ``extra`` (only if it is a string)."""
    value = extra.get(json_key)
    if value is None:
        return []
    if value == "":
        return [errors.required(child(path, json_key), "")]
    if isinstance(value, str) and value not in allowed:
        return [errors.not_supported(child(path, json_key), value, allowed)]
    return []


def validate_container_common(container: Container, path: str) -> list[FieldError]:
    """``validateContainerCommon`` for the modelled fields."""
    found: list[FieldError] = []
    if not container.name:
        found.append(errors.required(child(path, "name"), ""))
    else:
        found.extend(
            errors.invalid(child(path, "name"), container.name, m)
            for m in dns1123_label_errors(container.name)
        )
    if not container.image:
        found.append(errors.required(child(path, "image"), ""))
    found.extend(
        _enum_in_extra(
            container.extra, "terminationMessagePolicy", path, TERMINATION_MESSAGE_POLICIES
        )
    )
    found.extend(validate_container_ports(container, child(path, "ports")))
    found.extend(_enum_in_extra(container.extra, "imagePullPolicy", path, PULL_POLICIES))
    resources = container.resources
    if resources is not None:
        found.extend(
            validate_resource_requirements(
                resources.limits, resources.requests, child(path, "resources")
            )
        )
    return found


def _host_port_conflicts(containers: Sequence[Container], path: str) -> list[FieldError]:
    """``AccumulateUniqueHostPorts``: one ``protocol/hostIP/port`` per pod."""
    seen: set[str] = set()
    found: list[FieldError] = []
    for c_index, container in enumerate(containers):
        for p_index, port in enumerate(container.ports or ()):
            if not port.host_port:
                continue
            signature = f"{port.protocol or ''}/{port.host_ip or ''}/{port.host_port}"
            if signature in seen:
                port_path = index(child(index(path, c_index), "ports"), p_index)
                found.append(errors.duplicate(child(port_path, "hostPort"), signature))
            else:
                seen.add(signature)
    return found


def validate_containers(containers: Sequence[Container] | None, path: str) -> list[FieldError]:
    """``validateContainers``: at least one, each valid, names unique, host ports unique."""
    if not containers:
        return [errors.required(path, "")]
    found: list[FieldError] = []
    names: set[str] = set()
    for position, container in enumerate(containers):
        container_path = index(path, position)
        found.extend(validate_container_common(container, container_path))
        if container.name in names:
            found.append(errors.duplicate(child(container_path, "name"), container.name or ""))
        else:
            names.add(container.name or "")
        if container.restart_policy is not None:
            found.append(
                errors.forbidden(
                    child(container_path, "restartPolicy"), "may not be set for non-init containers"
                )
            )
    found.extend(_host_port_conflicts(containers, path))
    return found


def validate_init_containers(
    init_containers: Sequence[Container] | None, containers: Sequence[Container] | None, path: str
) -> list[FieldError]:
    """``validateInitContainers``: names unique across both lists; sidecars via restartPolicy."""
    found: list[FieldError] = []
    names = {c.name or "" for c in containers or ()}
    for position, container in enumerate(init_containers or ()):
        container_path = index(path, position)
        found.extend(validate_container_common(container, container_path))
        restart_always = False
        if container.restart_policy is not None:
            if container.restart_policy != "Always":
                found.append(
                    errors.not_supported(
                        child(container_path, "restartPolicy"),
                        container.restart_policy,
                        ("Always",),
                    )
                )
            restart_always = container.restart_policy == "Always"
        if container.name in names:
            found.append(errors.duplicate(child(container_path, "name"), container.name or ""))
        elif container.name:
            names.add(container.name)
        # Init containers run one by one, so each is checked for host-port conflicts alone.
        found.extend(_host_port_conflicts([container], path))
        if not restart_always:
            for json_key in _INIT_FORBIDDEN_KEYS:
                if container.extra.get(json_key) is not None:
                    found.append(
                        errors.forbidden(child(container_path, json_key), INIT_ONLY_WITH_ALWAYS)
                    )
    return found


# --- scheduling constraints ----------------------------------------------------------------


def validate_node_selector_requirement(
    requirement: NodeSelectorRequirement, path: str, *, allow_invalid_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement`` (a label expression of node affinity)."""
    found: list[FieldError] = []
    values = requirement.values or ()
    operator = requirement.operator or ""
    if operator in ("In", "NotIn"):
        if not values:
            found.append(errors.required(child(path, "values"), IN_NOT_IN_VALUES))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            found.append(errors.forbidden(child(path, "values"), EXISTS_NO_VALUES))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            found.append(
                errors.required(
                    child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        found.append(errors.invalid(child(path, "operator"), operator, NOT_A_VALID_OPERATOR))
    found.extend(validate_label_name(requirement.key or "", child(path, "key")))
    if not allow_invalid_value:
        for position, value in enumerate(values):
            found.extend(
                errors.invalid(index(child(path, "values"), position), value, m)
                for m in selectors.validate_label_value(value)
            )
    return found


def validate_node_field_requirement(
    requirement: NodeSelectorRequirement, path: str
) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one value."""
    found: list[FieldError] = []
    values = requirement.values or ()
    if requirement.operator in ("In", "NotIn"):
        if len(values) != 1:
            found.append(
                errors.required(
                    child(path, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        found.append(
            errors.invalid(
                child(path, "operator"), requirement.operator or "", NOT_A_VALID_OPERATOR
            )
        )
    if requirement.key != "metadata.name":
        found.append(
            errors.invalid(
                child(path, "key"), requirement.key or "", "not a valid field selector key"
            )
        )
    else:
        for position, value in enumerate(values):
            found.extend(
                errors.invalid(index(child(path, "values"), position), value, m)
                for m in name_is_dns_subdomain(value)
            )
    return found


def validate_node_selector_term(
    term: NodeSelectorTerm, path: str, *, allow_invalid_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``."""
    found: list[FieldError] = []
    for position, requirement in enumerate(term.match_expressions or ()):
        found.extend(
            validate_node_selector_requirement(
                requirement,
                index(child(path, "matchExpressions"), position),
                allow_invalid_value=allow_invalid_value,
            )
        )
    for position, requirement in enumerate(term.match_fields or ()):
        found.extend(
            validate_node_field_requirement(
                requirement, index(child(path, "matchFields"), position)
            )
        )
    return found


def validate_node_selector(selector: NodeSelector, path: str) -> list[FieldError]:
    """``ValidateNodeSelector``: at least one term."""
    terms_path = child(path, "nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [errors.required(terms_path, "must have at least one node selector term")]
    found: list[FieldError] = []
    for position, term in enumerate(selector.node_selector_terms):
        found.extend(validate_node_selector_term(term, index(terms_path, position)))
    return found


def _validate_node_affinity(affinity: NodeAffinity, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    required = affinity.required_during_scheduling_ignored_during_execution
    if required is not None:
        found.extend(
            validate_node_selector(
                required, child(path, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        )
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for position, term in enumerate(
        affinity.preferred_during_scheduling_ignored_during_execution or ()
    ):
        term_path = index(preferred_path, position)
        weight = term.weight or 0
        if not 1 <= weight <= 100:
            found.append(
                errors.invalid(child(term_path, "weight"), weight, "must be in the range 1-100")
            )
        # Preferred terms may name label values that exist on no node.
        found.extend(
            validate_node_selector_term(
                term.preference or NodeSelectorTerm(),
                child(term_path, "preference"),
                allow_invalid_value=True,
            )
        )
    return found


def _validate_label_keys(
    keys: Sequence[str] | None, selector: LabelSelector | None, path: str
) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [errors.forbidden(path, "must not be specified when labelSelector is not set")]
    found: list[FieldError] = []
    for position, label_key in enumerate(keys):
        found.extend(validate_label_name(label_key, index(path, position)))
    return found


def _validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> list[FieldError]:
    """``validatePodAffinityTerm``."""
    found = validate_label_selector(term.label_selector, child(path, "labelSelector"))
    found.extend(validate_label_selector(term.namespace_selector, child(path, "namespaceSelector")))
    for namespace in term.namespaces or ():
        found.extend(
            errors.invalid(child(path, "namespace"), namespace, m)
            for m in dns1123_label_errors(namespace)
        )
    match_keys = term.match_label_keys or ()
    found.extend(
        _validate_label_keys(match_keys, term.label_selector, child(path, "matchLabelKeys"))
    )
    found.extend(
        _validate_label_keys(
            term.mismatch_label_keys, term.label_selector, child(path, "mismatchLabelKeys")
        )
    )
    if term.label_selector is not None:
        positions = {label_key: i for i, label_key in enumerate(match_keys)}
        selector_keys = set(term.label_selector.match_labels or {})
        for requirement in term.label_selector.match_expressions or ():
            req_key = requirement.key or ""
            if req_key in positions and req_key in selector_keys:
                found.append(
                    errors.invalid(
                        index(path, positions[req_key]),
                        req_key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
                )
            selector_keys.add(req_key)
    mismatch = set(term.mismatch_label_keys or ())
    for position, label_key in enumerate(match_keys):
        if label_key in mismatch:
            found.append(
                errors.invalid(
                    index(child(path, "matchLabelKeys"), position),
                    label_key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    if not term.topology_key:
        found.append(errors.required(child(path, "topologyKey"), "can not be empty"))
    found.extend(validate_label_name(term.topology_key or "", child(path, "topologyKey")))
    return found


def _validate_pod_affinity(affinity: PodAffinity, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for position, term in enumerate(
        affinity.required_during_scheduling_ignored_during_execution or ()
    ):
        found.extend(_validate_pod_affinity_term(term, index(required_path, position)))
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for position, weighted in enumerate(
        affinity.preferred_during_scheduling_ignored_during_execution or ()
    ):
        term_path = index(preferred_path, position)
        weight = weighted.weight or 0
        if not 1 <= weight <= 100:
            found.append(
                errors.invalid(child(term_path, "weight"), weight, "must be in the range 1-100")
            )
        found.extend(
            _validate_pod_affinity_term(
                weighted.pod_affinity_term or PodAffinityTerm(), child(term_path, "podAffinityTerm")
            )
        )
    return found


def validate_affinity(affinity: Affinity | None, path: str) -> list[FieldError]:
    """``validateAffinity``: node affinity, pod affinity and pod anti-affinity."""
    if affinity is None:
        return []
    found: list[FieldError] = []
    if affinity.node_affinity is not None:
        found.extend(_validate_node_affinity(affinity.node_affinity, child(path, "nodeAffinity")))
    if affinity.pod_affinity is not None:
        found.extend(_validate_pod_affinity(affinity.pod_affinity, child(path, "podAffinity")))
    if affinity.pod_anti_affinity is not None:
        found.extend(
            _validate_pod_affinity(affinity.pod_anti_affinity, child(path, "podAntiAffinity"))
        )
    return found


def validate_taint_effect(effect: str, path: str, *, allow_empty: bool) -> list[FieldError]:
    """``validateTaintEffect``: NoSchedule, PreferNoSchedule or NoExecute."""
    if not effect and not allow_empty:
        return [errors.required(path, "")]
    if effect not in TAINT_EFFECTS:
        return [errors.not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: Sequence[Toleration] | None, path: str) -> list[FieldError]:
    """``ValidateTolerations``."""
    found: list[FieldError] = []
    for position, toleration in enumerate(tolerations or ()):
        item = index(path, position)
        toleration_key = toleration.key or ""
        operator = toleration.operator or ""
        value = toleration.value or ""
        effect = toleration.effect or ""
        if toleration_key:
            found.extend(validate_label_name(toleration_key, child(item, "key")))
        if not toleration_key and operator != "Exists":
            found.append(
                errors.invalid(
                    child(item, "operator"),
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if toleration.toleration_seconds is not None and effect != "NoExecute":
            found.append(
                errors.invalid(
                    child(item, "effect"),
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            messages = selectors.validate_label_value(value)
            if messages:
                found.append(errors.invalid(child(item, "operator"), value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                found.append(
                    errors.invalid(
                        child(item, "operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            found.append(
                errors.not_supported(child(item, "operator"), operator, ("Equal", "Exists"))
            )
        if effect:
            found.extend(validate_taint_effect(effect, child(item, "effect"), allow_empty=True))
    return found


def validate_topology_spread_constraints(
    constraints: Sequence[TopologySpreadConstraint] | None, path: str
) -> list[FieldError]:
    """``validateTopologySpreadConstraints``."""
    found: list[FieldError] = []
    constraints = constraints or ()
    for position, constraint in enumerate(constraints):
        item = index(path, position)
        max_skew = constraint.max_skew or 0
        if max_skew <= 0:
            found.append(errors.invalid(child(item, "maxSkew"), max_skew, NOT_POSITIVE))
        if not constraint.topology_key:
            found.append(errors.required(child(item, "topologyKey"), "can not be empty"))
        action = constraint.when_unsatisfiable or ""
        if action not in WHEN_UNSATISFIABLE:
            found.append(
                errors.not_supported(child(item, "whenUnsatisfiable"), action, WHEN_UNSATISFIABLE)
            )
        for later in constraints[position + 1 :]:
            if (
                later.topology_key == constraint.topology_key
                and later.when_unsatisfiable == constraint.when_unsatisfiable
            ):
                found.append(
                    errors.duplicate(
                        child(item, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{constraint.topology_key or ''}, {action}}}",
                    )
                )
                break
        if constraint.min_domains is not None:
            if constraint.min_domains <= 0:
                found.append(
                    errors.invalid(child(item, "minDomains"), constraint.min_domains, NOT_POSITIVE)
                )
            if action != "DoNotSchedule":
                found.append(
                    errors.invalid(
                        child(item, "minDomains"),
                        constraint.min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for attr, json_key in (
            ("node_affinity_policy", "nodeAffinityPolicy"),
            ("node_taints_policy", "nodeTaintsPolicy"),
        ):
            policy = getattr(constraint, attr)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                found.append(
                    errors.not_supported(child(item, json_key), policy, NODE_INCLUSION_POLICIES)
                )
        found.extend(_validate_spread_match_label_keys(constraint, child(item, "matchLabelKeys")))
        found.extend(
            validate_label_selector(constraint.label_selector, child(item, "labelSelector"))
        )
    return found


def _validate_spread_match_label_keys(
    constraint: TopologySpreadConstraint, path: str
) -> list[FieldError]:
    keys = constraint.match_label_keys or ()
    if not keys:
        return []
    found: list[FieldError] = []
    selector = constraint.label_selector
    selector_keys: set[str] = set()
    if selector is not None:
        selector_keys.update(selector.match_labels or {})
        selector_keys.update(r.key or "" for r in selector.match_expressions or ())
    else:
        found.append(errors.forbidden(path, "must not be specified when labelSelector is not set"))
    for position, label_key in enumerate(keys):
        found.extend(validate_label_name(label_key, index(path, position)))
        if label_key in selector_keys:
            found.append(
                errors.invalid(
                    index(path, position),
                    label_key,
                    "exists in both matchLabelKeys and labelSelector",
                )
            )
    return found


# --- the pod spec --------------------------------------------------------------------------------


def validate_pod_spec(spec: PodSpec, path: str, *, is_pod: bool) -> list[FieldError]:
    """``ValidatePodSpec`` for the modelled fields; ``is_pod`` is upstream's ``ResourceIsPod``."""
    found: list[FieldError] = []
    if spec.termination_grace_period_seconds is None:
        found.append(errors.required(child(path, "terminationGracePeriodSeconds"), ""))
    found.extend(validate_containers(spec.containers, child(path, "containers")))
    found.extend(
        validate_init_containers(
            spec.init_containers, spec.containers, child(path, "initContainers")
        )
    )
    if spec.host_network:
        for c_index, container in enumerate(spec.containers or ()):
            for p_index, port in enumerate(container.ports or ()):
                host, target = port.host_port or 0, port.container_port or 0
                if (is_pod or host != 0) and host != target:
                    port_path = index(
                        child(index(child(path, "containers"), c_index), "ports"), p_index
                    )
                    found.append(
                        errors.invalid(
                            child(port_path, "hostPort"),
                            host,
                            "must match `containerPort` when `hostNetwork` is true",
                        )
                    )
    restart = spec.restart_policy or ""
    if not restart:
        found.append(errors.required(child(path, "restartPolicy"), ""))
    elif restart not in RESTART_POLICIES:
        found.append(errors.not_supported(child(path, "restartPolicy"), restart, RESTART_POLICIES))
    found.extend(_enum_in_extra(spec.extra, "dnsPolicy", path, DNS_POLICIES))
    found.extend(validate_labels(spec.node_selector, child(path, "nodeSelector")))
    found.extend(validate_affinity(spec.affinity, child(path, "affinity")))
    found.extend(
        validate_topology_spread_constraints(
            spec.topology_spread_constraints, child(path, "topologySpreadConstraints")
        )
    )
    for attr, json_key in (
        ("service_account_name", "serviceAccountName"),
        ("node_name", "nodeName"),
    ):
        value = getattr(spec, attr)
        if value:
            found.extend(
                errors.invalid(child(path, json_key), value, m)
                for m in name_is_dns_subdomain(value)
            )
    if (
        spec.active_deadline_seconds is not None
        and not 1 <= spec.active_deadline_seconds <= MAX_INT32
    ):
        found.append(
            errors.invalid(
                child(path, "activeDeadlineSeconds"),
                spec.active_deadline_seconds,
                f"must be between 1 and {MAX_INT32}, inclusive",
            )
        )
    for json_key in ("hostname", "subdomain"):
        value = spec.extra.get(json_key)
        if isinstance(value, str) and value:
            found.extend(
                errors.invalid(child(path, json_key), value, m) for m in dns1123_label_errors(value)
            )
    if spec.tolerations:
        found.extend(validate_tolerations(spec.tolerations, child(path, "tolerations")))
    if spec.priority_class_name:
        found.extend(
            errors.invalid(child(path, "priorityClassName"), spec.priority_class_name, m)
            for m in name_is_dns_subdomain(spec.priority_class_name)
        )
    if spec.preemption_policy is not None:
        found.extend(
            validate_preemption_policy(spec.preemption_policy, child(path, "preemptionPolicy"))
        )
    if spec.overhead is not None:
        found.extend(validate_resource_requirements(spec.overhead, None, child(path, "overhead")))
    return found


def validate_preemption_policy(policy: str, path: str) -> list[FieldError]:
    """``ValidatePreemptionPolicy``: PreemptLowerPriority or Never."""
    if policy in PREEMPTION_POLICIES:
        return []
    if not policy:
        return [errors.required(path, "")]
    return [errors.not_supported(path, policy, PREEMPTION_POLICIES)]


def validate_pod_template_spec(template: PodTemplateSpec | None, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: template labels and annotations, then the pod spec."""
    template = template or PodTemplateSpec()
    metadata = template.metadata
    found = validate_labels(metadata.labels if metadata else None, child(path, "labels"))
    found.extend(
        validate_annotations(metadata.annotations if metadata else None, child(path, "annotations"))
    )
    found.extend(validate_pod_spec(template.spec or PodSpec(), child(path, "spec"), is_pod=False))
    return found


def pod_spec_warnings(spec: PodSpec, path: str) -> list[str]:
    """``GetWarningsForPodTemplate`` (part): a negative grace period is treated as 1 second."""
    grace = spec.termination_grace_period_seconds
    if grace is not None and grace < 0:
        return [
            f"{child(path, 'terminationGracePeriodSeconds')}: must be >= 0; negative values are "
            "invalid and will be treated as 1"
        ]
    return []


__all__ = [
    "qualified_name_errors",
    "validate_affinity",
    "validate_container_common",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_preemption_policy",
    "validate_resource_requirements",
    "validate_taint_effect",
    "validate_tolerations",
]
