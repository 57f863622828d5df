"""Validation of a pod spec, shared by pods and by the pod templates of workloads.

Mirrors upstream ``ValidatePodSpec`` and the functions it calls in
``pkg/apis/core/validation/validation.go`` for the fields kubeprio models (containers,
init containers and ephemeral containers with their ports and resources, restart and DNS policy, node
selector and affinity, tolerations, topology spread constraints, names of the node,
service account, priority class and runtime class, preemption policy, overhead), in upstream's order,
with upstream's field paths and texts. Fields kubeprio keeps only in ``extra`` are
checked where upstream checks an enumerated value (``imagePullPolicy``,
``terminationMessagePolicy``, ``dnsPolicy``); volumes by ``validation.volumes`` (names,
one source each, claims and generic ephemeral volumes); volume mounts, env, probes and
security contexts are not validated.

Resource requirements are checked by ``validation.resources``; node selector, affinity,
tolerations and topology spread by ``validation.affinity``. Upstream quirk kept on
purpose: overhead errors are reported at ``spec.overhead.limits[...]``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import (
    Container,
    EphemeralContainer,
    PodSpec,
    PodTemplateSpec,
)
from kubeprio.api.errors import FieldError
from kubeprio.api.model import INT32_MAX
from kubeprio.api.validation.affinity import (
    validate_affinity,
    validate_tolerations,
    validate_topology_spread_constraints,
)
from kubeprio.api.validation.meta import (
    child,
    dns1123_label_errors,
    index,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
)
from kubeprio.api.validation.resources import (
    validate_resource_requirements,
)
from kubeprio.api.validation.volumes import validate_volumes

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")  # sorted, as sets.List prints them
TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
INIT_ONLY_WITH_ALWAYS: Final = "may not be set for init containers without restartPolicy=Always"
_INIT_FORBIDDEN_KEYS: Final = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
NOT_FOR_EPHEMERAL: Final = "cannot be set for an Ephemeral Container"
EPHEMERAL_FORBIDDEN_FIELDS: Final = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
"""The fields of ``EphemeralContainerCommon`` that ``allowedEphemeralContainerFields``
does not allow, in struct order (``validateFieldAllowList`` walks the struct)."""


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


def port_number_errors(port: int) -> list[str]:
    """``IsValidPortNum``."""
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
                for m in port_number_errors(port.container_port)
            )
        if port.host_port:
            found.extend(
                errors.invalid(child(port_path, "hostPort"), port.host_port, m)
                for m in port_number_errors(port.host_port)
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


def image_whitespace_errors(image: str | None, path: str) -> list[FieldError]:
    """``validateContainerOnlyForPod``: a pod's container image may not be padded with
    spaces (templates may: their pods are checked when created)."""
    if image is None or image == image.strip():
        return []
    return [errors.invalid(path, image, "must not have leading or trailing whitespace")]


def _ephemeral_field_set(container: EphemeralContainer, json_key: str) -> bool:
    """Whether a field differs from its Go zero value. An empty list or map is not zero
    (``reflect.DeepEqual`` tells a non-nil empty slice from nil), so present means set."""
    modelled = {
        "ports": container.ports,
        "resources": container.resources,
        "restartPolicy": container.restart_policy,
    }
    if json_key == "resources":
        resources = container.resources
        # ``resources: {}`` is the zero struct; any list in it is a value.
        return resources is not None and (
            resources.limits is not None
            or resources.requests is not None
            or any(v is not None for v in resources.extra.values())
        )
    if json_key in modelled:
        return modelled[json_key] is not None
    return container.extra.get(json_key) is not None


def validate_ephemeral_containers(
    ephemeral: Sequence[EphemeralContainer] | None,
    containers: Sequence[Container] | None,
    init_containers: Sequence[Container] | None,
    path: str,
) -> list[FieldError]:
    """``validateEphemeralContainers``: the common container rules and the pod-only image
    rule, names unique across every container, ``targetContainerName`` naming a regular
    or init container, none of the fields an ephemeral container may not set, and no
    volume-mount ``subPath``/``subPathExpr``."""
    if not ephemeral:
        return []
    found: list[FieldError] = []
    others = {c.name or "" for c in (*(containers or ()), *(init_containers or ()))}
    names = set(others)
    for position, container in enumerate(ephemeral):
        container_path = index(path, position)
        found.extend(validate_container_common(container.as_container(), container_path))
        found.extend(image_whitespace_errors(container.image, child(container_path, "image")))
        name = container.name or ""
        if name in names:
            found.append(errors.duplicate(child(container_path, "name"), name))
        else:
            names.add(name)
        target = container.target_container_name or ""
        if target and target not in others:
            found.append(
                errors.value_not_found(child(container_path, "targetContainerName"), target)
            )
        found.extend(
            errors.forbidden(child(container_path, json_key), NOT_FOR_EPHEMERAL)
            for json_key in EPHEMERAL_FORBIDDEN_FIELDS
            if _ephemeral_field_set(container, json_key)
        )
        mounts = container.extra.get("volumeMounts")
        for m_index, mount in enumerate(mounts if isinstance(mounts, list) else ()):
            if not isinstance(mount, dict):
                continue
            for json_key in ("subPath", "subPathExpr"):
                if mount.get(json_key):
                    mount_path = index(child(container_path, "volumeMounts"), m_index)
                    found.append(errors.forbidden(child(mount_path, json_key), NOT_FOR_EPHEMERAL))
    return found


# --- the pod spec --------------------------------------------------------------------------------


def validate_pod_spec(
    spec: PodSpec, path: str, *, is_pod: bool, pod_name: str | None = None
) -> list[FieldError]:
    """``ValidatePodSpec`` for the modelled fields; ``is_pod`` is upstream's ``ResourceIsPod``,
    ``pod_name`` the name in its ``podMeta`` (a template's is empty)."""
    found: list[FieldError] = []
    if spec.termination_grace_period_seconds is None:
        found.append(errors.required(child(path, "terminationGracePeriodSeconds"), ""))
    found.extend(
        validate_volumes(spec.extra.get("volumes"), child(path, "volumes"), pod_name=pod_name)
    )
    found.extend(validate_containers(spec.containers, child(path, "containers")))
    found.extend(
        validate_init_containers(
            spec.init_containers, spec.containers, child(path, "initContainers")
        )
    )
    found.extend(
        validate_ephemeral_containers(
            spec.ephemeral_containers,
            spec.containers,
            spec.init_containers,
            child(path, "ephemeralContainers"),
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
        and not 1 <= spec.active_deadline_seconds <= INT32_MAX
    ):
        found.append(
            errors.invalid(
                child(path, "activeDeadlineSeconds"),
                spec.active_deadline_seconds,
                f"must be between 1 and {INT32_MAX}, inclusive",
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
    if spec.runtime_class_name is not None:
        # ValidateRuntimeClassName: a DNS subdomain (checked even when empty).
        found.extend(
            errors.invalid(child(path, "runtimeClassName"), spec.runtime_class_name, m)
            for m in name_is_dns_subdomain(spec.runtime_class_name)
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
    spec = template.spec or PodSpec()
    found.extend(
        validate_pod_spec(
            spec,
            child(path, "spec"),
            is_pod=False,
            pod_name=metadata.name if metadata else None,
        )
    )
    if spec.ephemeral_containers:
        found.append(
            errors.forbidden(
                child(child(path, "spec"), "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
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
