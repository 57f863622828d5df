"""Pod defaulting: the values the API server fills in on every pod, template and container.

Mirrors the pod part of upstream ``pkg/apis/core/v1/defaults.go`` (with
``zz_generated.defaults.go``, which decides which function runs where):

* ``SetDefaults_PodSpec`` (scheduler name, grace period, restart and DNS policy,
  security context) runs on pods *and* pod templates (:func:`default_pod_spec`,
  :func:`default_pod_template`); ``SetDefaults_Pod`` (requests default to limits,
  ``enableServiceLinks``, host-network host ports) on pods only (:func:`default_pod`).
* The deprecated ``serviceAccount`` is kept equal to ``serviceAccountName`` on pods and
  templates (upstream does it in the v1 conversion; :func:`with_service_account_name`).
* Container defaults (pull policy from the image reference, ``pkg/util/parsers``;
  termination message; port protocol ``TCP``) and the rounding of resource quantities up
  to milli precision run on every container, ephemeral ones included.

Defaults on fields kubeprio does not model (``dnsPolicy``, ``enableServiceLinks``,
``imagePullPolicy``, ``terminationMessagePath``/``Policy``, the pod ``securityContext``)
are written into the ``extra`` of the nearest model (:func:`with_extra_defaults`).
``api.defaults`` dispatches every kind to its defaulter; the workload defaulters reach
pod templates through :func:`default_pod_template`. This runs on every pod written, so
it returns the very object when nothing changes. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kubeprio.api.core import (
    DEFAULT_SCHEDULER_NAME,
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
    Container,
    ContainerPort,
    EphemeralContainer,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ResourceList,
    ResourceRequirements,
)
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.quantity import Quantity

RESTART_POLICY_ALWAYS: Final = "Always"
DNS_CLUSTER_FIRST: Final = "ClusterFirst"
PROTOCOL_TCP: Final = "TCP"
PULL_ALWAYS: Final = "Always"
PULL_IF_NOT_PRESENT: Final = "IfNotPresent"
TERMINATION_MESSAGE_PATH_DEFAULT: Final = "/dev/termination-log"
TERMINATION_MESSAGE_READ_FILE: Final = "File"
DEFAULT_IMAGE_TAG: Final = "latest"
_MILLI_IN_NANOS: Final = 1_000_000
DEPRECATED_SERVICE_ACCOUNT: Final = "serviceAccount"
"""``spec.serviceAccount``: the deprecated alias of ``spec.serviceAccountName``."""


# --- image references (pkg/util/parsers.ParseImageName) ---------------------------------------

_PATH_COMPONENT: Final = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_DOMAIN: Final = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?"
)
_TAG: Final = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST: Final = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")


NO_RESOURCES: Final = ResourceRequirements()
"""``resources: {}``: what a container that names no resources carries (one shared,
frozen value instead of one per defaulted container)."""


def image_tag(image: str) -> str | None:
    """The tag ``ParseImageName`` finds in ``image``; ``latest`` if it has neither tag nor digest.

    ``None`` when the reference does not parse (upstream then ignores the error and
    treats the image as having no ``latest`` tag).
    """
    name, _, digest = image.partition("@")
    if digest and not _DIGEST.fullmatch(digest):
        return None
    tag = ""
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
        if not _TAG.fullmatch(tag):
            return None
    components = name.split("/")
    first = components[0]
    has_domain = len(components) > 1 and (
        any(ch in first for ch in ".:") or first == "localhost" or first.lower() != first
    )
    if has_domain:
        if not _DOMAIN.fullmatch(first):
            return None
        components = components[1:]
    if not components or not all(_PATH_COMPONENT.fullmatch(c) for c in components):
        return None
    if not tag and not digest:
        return DEFAULT_IMAGE_TAG
    return tag


def default_pull_policy(image: str | None) -> str:
    """``Always`` for a ``:latest`` (or untagged) image, ``IfNotPresent`` otherwise."""
    return PULL_ALWAYS if image_tag(image or "") == DEFAULT_IMAGE_TAG else PULL_IF_NOT_PRESENT


# --- helpers ----------------------------------------------------------------------------------


def _unset(extra: Mapping[str, Any], json_key: str) -> bool:
    """An unmodelled key is unset when missing, null or empty (Go's zero value)."""
    value = extra.get(json_key)
    return value is None or value == ""


def with_extra_defaults(extra: JsonDict, defaults: Mapping[str, Any]) -> JsonDict | None:
    """``extra`` with each default filled in where unset; None if nothing changed."""
    missing = {k: v for k, v in defaults.items() if _unset(extra, k)}
    if not missing:
        return None
    return {**extra, **missing}


def round_up_milli(quantity: Quantity) -> Quantity:
    """``RoundUp(-3)``: drop precision below a milli-unit, rounding away from zero."""
    nanos = quantity.nanos
    if nanos % _MILLI_IN_NANOS == 0:
        return quantity
    millis = -(-abs(nanos) // _MILLI_IN_NANOS)  # ceiling of the magnitude
    return Quantity(millis * _MILLI_IN_NANOS * (1 if nanos > 0 else -1), quantity.format)


def default_resource_list(resources: ResourceList | None) -> ResourceList | None:
    """``SetDefaults_ResourceList``: every quantity rounded up to milli precision."""
    if not resources:
        return resources
    rounded = {name: round_up_milli(q) for name, q in resources.items()}
    if all(rounded[name] is resources[name] for name in rounded):
        return resources
    return rounded


# --- containers -------------------------------------------------------------------------------


def default_container(container: Container, *, host_network: bool = False) -> Container:
    """``SetDefaults_Container`` plus the per-port and per-resource-list defaults."""
    changes: dict[str, Any] = {}
    extra = with_extra_defaults(
        container.extra,
        {
            "imagePullPolicy": default_pull_policy(container.image),
            "terminationMessagePath": TERMINATION_MESSAGE_PATH_DEFAULT,
            "terminationMessagePolicy": TERMINATION_MESSAGE_READ_FILE,
        },
    )
    if extra is not None:
        changes["extra"] = extra
    if container.ports:
        ports = tuple(_default_port(port, host_network=host_network) for port in container.ports)
        if any(new is not old for new, old in zip(ports, container.ports, strict=True)):
            changes["ports"] = ports
    if container.resources is None:
        # Upstream's ``resources`` is a struct, not a pointer: it is always served, as
        # ``resources: {}`` when empty, and a template without it equals (and hashes as)
        # one that says ``resources: {}`` (kubectl sends that, e.g. in ``rollout undo``).
        changes["resources"] = NO_RESOURCES
    else:
        resources = container.resources
        limits = default_resource_list(resources.limits)
        requests = default_resource_list(resources.requests)
        if limits is not resources.limits or requests is not resources.requests:
            changes["resources"] = evolve(resources, limits=limits, requests=requests)
    return evolve(container, **changes) if changes else container


def _default_port(port: ContainerPort, *, host_network: bool) -> ContainerPort:
    changes: dict[str, Any] = {}
    if not port.protocol:
        changes["protocol"] = PROTOCOL_TCP
    if host_network and not port.host_port and port.container_port:
        # defaultHostNetworkPorts (pods only): with host networking the host port is the port.
        changes["host_port"] = port.container_port
    return evolve(port, **changes) if changes else port


def _requests_from_limits(container: Container) -> Container:
    """``SetDefaults_Pod``: a resource with a limit but no request is requested at its limit."""
    resources = container.resources
    if resources is None or resources.limits is None:
        return container
    requests = dict(resources.requests or {})
    added = False
    for name, value in resources.limits.items():
        if name not in requests:
            requests[name] = value
            added = True
    if not added and resources.requests is not None:
        return container
    return evolve(container, resources=evolve(resources, requests=requests))


# --- pod spec ---------------------------------------------------------------------------------


def default_pod_spec(spec: PodSpec, *, is_pod: bool = False) -> PodSpec:
    """``SetDefaults_PodSpec`` and the container defaults; ``is_pod`` adds ``SetDefaults_Pod``."""
    changes: dict[str, Any] = {}
    if not spec.scheduler_name:
        changes["scheduler_name"] = DEFAULT_SCHEDULER_NAME
    if spec.termination_grace_period_seconds is None:
        changes["termination_grace_period_seconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.restart_policy:
        changes["restart_policy"] = RESTART_POLICY_ALWAYS
    extra_defaults: dict[str, Any] = {"dnsPolicy": DNS_CLUSTER_FIRST, "securityContext": {}}
    if is_pod:
        extra_defaults["enableServiceLinks"] = True
    extra = with_extra_defaults(spec.extra, extra_defaults)
    if extra is not None:
        changes["extra"] = extra
    host_network = bool(is_pod and spec.host_network)
    for attr in ("containers", "init_containers"):
        containers: tuple[Container, ...] | None = getattr(spec, attr)
        if not containers:
            continue
        defaulted = []
        for container in containers:
            if is_pod:
                container = _requests_from_limits(container)
            defaulted.append(default_container(container, host_network=host_network))
        if any(new is not old for new, old in zip(defaulted, containers, strict=True)):
            changes[attr] = tuple(defaulted)
    ephemeral = _default_ephemeral_containers(spec.ephemeral_containers)
    if ephemeral is not spec.ephemeral_containers:
        changes["ephemeral_containers"] = ephemeral
    overhead = default_resource_list(spec.overhead)
    if overhead is not spec.overhead:
        changes["overhead"] = overhead
    spec = evolve(spec, **changes) if changes else spec
    alias = spec.extra.get(DEPRECATED_SERVICE_ACCOUNT)
    return with_service_account_name(
        spec, spec.service_account_name or (alias if isinstance(alias, str) else "")
    )


def _default_ephemeral_containers(
    containers: tuple[EphemeralContainer, ...] | None,
) -> tuple[EphemeralContainer, ...] | None:
    """``SetDefaults_EphemeralContainer``: the container defaults on the common fields
    (pull policy, termination message, port protocol); no host-network ports and no
    requests from limits, which upstream applies to regular and init containers only."""
    if not containers:
        return containers
    defaulted = []
    changed = False
    for container in containers:
        common = container.as_container()
        done = default_container(common)
        if done is common:
            defaulted.append(container)
        else:
            changed = True
            defaulted.append(
                EphemeralContainer.from_container(done, container.target_container_name)
            )
    return tuple(defaulted) if changed else containers


def with_service_account_name(spec: PodSpec, name: str) -> PodSpec:
    """``spec`` running as ``name``, its deprecated ``serviceAccount`` alias equal to it.

    Upstream keeps the alias in the v1 conversion of every PodSpec (pods and templates):
    ``Convert_v1_PodSpec_To_core_PodSpec`` reads ``serviceAccount`` when
    ``serviceAccountName`` is empty, and ``Convert_core_PodSpec_To_v1_PodSpec`` writes it
    back equal to the name (omitted when empty). So ``kubectl get pod -o yaml`` shows
    both, and a dump of a real cluster, which already has both, comes back unchanged.
    """
    changes: dict[str, Any] = {}
    if name and spec.service_account_name != name:
        changes["service_account_name"] = name
    if name:
        if spec.extra.get(DEPRECATED_SERVICE_ACCOUNT) != name:
            changes["extra"] = {**spec.extra, DEPRECATED_SERVICE_ACCOUNT: name}
    elif DEPRECATED_SERVICE_ACCOUNT in spec.extra:
        changes["extra"] = {
            key: value for key, value in spec.extra.items() if key != DEPRECATED_SERVICE_ACCOUNT
        }
    return evolve(spec, **changes) if changes else spec


def default_pod(pod: Pod) -> Pod:
    """``SetObjectDefaults_Pod``: ``SetDefaults_Pod`` + ``SetDefaults_PodSpec`` + containers."""
    spec = default_pod_spec(pod.spec or PodSpec(), is_pod=True)
    return pod if spec is pod.spec else evolve(pod, spec=spec)


def default_pod_template(template: PodTemplateSpec | None) -> PodTemplateSpec:
    """The defaults a workload's pod template gets (``SetDefaults_PodSpec``, not ``_Pod``)."""
    template = template or PodTemplateSpec()
    spec = default_pod_spec(template.spec or PodSpec())
    return template if spec is template.spec else evolve(template, spec=spec)
