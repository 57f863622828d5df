"""The ``LimitRanger`` admission plugin: LimitRange defaults and bounds for new pods.

Mirrors upstream ``plugin/pkg/admission/limitranger/admission.go`` (v1.32):

* **mutating, pods, CREATE** (``PodMutateLimitFunc``): for each LimitRange of the
  namespace, its ``Container`` item's ``default`` limits and ``defaultRequest`` requests are
  written into every container and init container that lacks them (a resource the
  container already names is left alone); the pod is annotated
  ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request for container
  app; cpu limit for init container setup`` (per container, requests before limits,
  names sorted; a later LimitRange that sets something replaces the annotation).
  Pod defaulting has run before: a container with a limit but no request already
  requests its limit, so a ``defaultRequest`` never overrides it.
* **validating, pods, CREATE** (``PodValidateLimitFunc``): for each LimitRange, in name
  order, the ``Container`` item's ``min``, ``max`` and ``maxLimitRequestRatio`` are checked
  on every container, then every init container; the ``Pod`` item's on the pod's
  requests and limits (the sum over containers, at least the largest init container,
  sidecars added, as ``podRequests``/``podLimits``: ``api.quota.pod_amounts`` without the
  overhead). Every violation of the first LimitRange that has any is reported in one 403,
  joined as ``utilerrors.NewAggregate`` joins (``[a, b]``, duplicates once): ``pods "x" is
  forbidden: [minimum cpu usage per Container is 100m, but request is 50m, maximum memory
  usage per Container is 1Gi, but limit is 2Gi]``.

Pod updates are ignored, as upstream since containers' resources cannot change (its
``SupportsAttributes``); so are subresources, other kinds and PersistentVolumeClaims
(kubeprio serves none). Comparisons are in milli-units unless a value is too large for
them (``requestLimitEnforcedValues``). Go walks LimitRanges and resource maps in random
order; kubeprio walks LimitRanges by name and resources by name, so the message order is
stable. Reads LimitRanges only through ``Listers``; never writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.api import errors
from kubeprio.api.core import Container, Pod, PodSpec, ResourceList, ResourceRequirements
from kubeprio.api.limitrange import LIMIT_TYPE_CONTAINER, LIMIT_TYPE_POD, LimitRange
from kubeprio.api.model import INT64_MAX, evolve
from kubeprio.api.quantity import Quantity
from kubeprio.api.quota import pod_amounts

PLUGIN_NAME: Final = "LimitRanger"
ANNOTATION: Final = "kubernetes.io/limit-ranger"
MAX_MILLI_VALUE: Final = INT64_MAX // 1000
_ZERO: Final = Quantity(0)


def _handles(request: AdmissionRequest) -> bool:
    """``SupportsAttributes``: pod creates only (no subresources, no pod updates)."""
    return (
        request.operation is Operation.CREATE
        and not request.subresource
        and isinstance(request.obj, Pod)
    )


# --- defaults (PodMutateLimitFunc) ----------------------------------------------------------


def _default_requirements(lr: LimitRange) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """``defaultContainerResourceRequirements``: (requests, limits) of the Container items."""
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    for item in (lr.spec.limits if lr.spec is not None else None) or ():
        if item.type == LIMIT_TYPE_CONTAINER:
            requests.update(item.default_request or {})
            limits.update(item.default or {})
    return requests, limits


def _with_missing(
    current: ResourceList | None, defaults: dict[str, Quantity]
) -> tuple[ResourceList | None, list[str]]:
    missing = sorted(name for name in defaults if name not in (current or {}))
    if not missing:
        return current, []
    # Sorted by name, as Go writes the map.
    merged = {**(current or {}), **{name: defaults[name] for name in missing}}
    return dict(sorted(merged.items())), missing


def _merge_container(
    container: Container,
    requests: dict[str, Quantity],
    limits: dict[str, Quantity],
    prefix: str,
    annotations: list[str],
) -> Container:
    """``mergeContainerResources``: fill in missing limits and requests, note what was set."""
    resources = container.resources or ResourceRequirements()
    new_limits, set_limits = _with_missing(resources.limits, limits)
    new_requests, set_requests = _with_missing(resources.requests, requests)
    if set_requests:
        annotations.append(f"{', '.join(set_requests)} request for {prefix} {container.name}")
    if set_limits:
        annotations.append(f"{', '.join(set_limits)} limit for {prefix} {container.name}")
    if not set_limits and not set_requests:
        return container
    return evolve(container, resources=evolve(resources, limits=new_limits, requests=new_requests))


def _merge_all(
    containers: tuple[Container, ...] | None,
    requests: dict[str, Quantity],
    limits: dict[str, Quantity],
    prefix: str,
    annotations: list[str],
) -> tuple[Container, ...] | None:
    if not containers:
        return containers
    merged = tuple(_merge_container(c, requests, limits, prefix, annotations) for c in containers)
    return containers if all(a is b for a, b in zip(merged, containers, strict=True)) else merged


def apply_defaults(lr: LimitRange, pod: Pod) -> Pod:
    """``PodMutateLimitFunc``/``mergePodResourceRequirements``: ``pod`` with ``lr``'s defaults."""
    requests, limits = _default_requirements(lr)
    if not requests and not limits:
        return pod
    spec = pod.spec or PodSpec()
    annotations: list[str] = []
    containers = _merge_all(spec.containers, requests, limits, "container", annotations)
    init = _merge_all(spec.init_containers, requests, limits, "init container", annotations)
    if not annotations:
        return pod
    value = "LimitRanger plugin set: " + "; ".join(annotations)
    metadata = evolve(
        pod.metadata, annotations={**(pod.metadata.annotations or {}), ANNOTATION: value}
    )
    return evolve(
        pod, metadata=metadata, spec=evolve(spec, containers=containers, init_containers=init)
    )


# --- bounds (PodValidateLimitFunc) ----------------------------------------------------------


def _enforced_values(
    request: Quantity, limit: Quantity, enforced: Quantity
) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: milli-units when all three fit, else whole units."""
    if (
        request.value() <= MAX_MILLI_VALUE
        and limit.value() <= MAX_MILLI_VALUE
        and enforced.value() <= MAX_MILLI_VALUE
    ):
        return request.milli_value(), limit.milli_value(), enforced.milli_value()
    return request.value(), limit.value(), enforced.value()


def _min_constraint(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str | None:
    """``minConstraint``."""
    req, lim = requests.get(name), limits.get(name)
    req_value, lim_value, enforced_value = _enforced_values(req or _ZERO, lim or _ZERO, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if req_value < enforced_value:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and lim_value < enforced_value:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max_constraint(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str | None:
    """``maxConstraint``."""
    req, lim = requests.get(name), limits.get(name)
    req_value, lim_value, enforced_value = _enforced_values(req or _ZERO, lim or _ZERO, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if lim_value > enforced_value:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and req_value > enforced_value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio_constraint(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str | None:
    """``limitRequestRatioConstraint``."""
    req, lim = requests.get(name), limits.get(name)
    req_value, lim_value, _ = _enforced_values(req or _ZERO, lim or _ZERO, enforced)
    head = f"{name} max limit to request ratio per {kind} is {enforced}"
    if req is None or req_value == 0:
        return f"{head}, but no request is specified or request is 0"
    if lim is None or lim_value == 0:
        return f"{head}, but no limit is specified or limit is 0"
    observed = float(lim_value) / float(req_value)
    shown = observed
    maximum = float(enforced.value())
    if enforced.value() <= MAX_MILLI_VALUE:
        observed *= 1000
        maximum = float(enforced.milli_value())
    if observed > maximum:
        return f"{head}, but provided ratio is {shown:f}"
    return None


def _check(
    kind: str,
    item_min: ResourceList | None,
    item_max: ResourceList | None,
    item_ratio: ResourceList | None,
    requests: ResourceList,
    limits: ResourceList,
    found: list[str],
) -> None:
    for bounds, constraint in (
        (item_min, _min_constraint),
        (item_max, _max_constraint),
        (item_ratio, _ratio_constraint),
    ):
        for name in sorted(bounds or {}):
            message = constraint(kind, name, (bounds or {})[name], requests, limits)
            if message is not None:
                found.append(message)


def _all_containers(spec: PodSpec) -> Iterable[Container]:
    yield from spec.containers or ()
    yield from spec.init_containers or ()


def violations(lr: LimitRange, pod: Pod) -> list[str]:
    """``PodValidateLimitFunc``: every bound of ``lr`` that ``pod`` breaks, in order."""
    spec = pod.spec or PodSpec()
    found: list[str] = []
    for item in (lr.spec.limits if lr.spec is not None else None) or ():
        if item.type == LIMIT_TYPE_CONTAINER:
            for container in _all_containers(spec):
                resources = container.resources or ResourceRequirements()
                _check(
                    LIMIT_TYPE_CONTAINER,
                    item.min,
                    item.max,
                    item.max_limit_request_ratio,
                    resources.requests or {},
                    resources.limits or {},
                    found,
                )
        elif item.type == LIMIT_TYPE_POD:
            _check(
                LIMIT_TYPE_POD,
                item.min,
                item.max,
                item.max_limit_request_ratio,
                pod_amounts(spec, limits=False, overhead=False),
                pod_amounts(spec, limits=True, overhead=False),
                found,
            )
    return found


class LimitRangerPlugin:
    """Upstream ``LimitRanger``: mutating (defaults) and validating (bounds)."""

    admits_kinds = validates_kinds = (Pod,)
    ignores_subresources = True  # _handles

    name = PLUGIN_NAME

    def __init__(self, listers: Listers) -> None:
        self._listers = listers

    def _ranges(self, namespace: str) -> list[LimitRange]:
        return self._listers.limit_ranges.list(namespace)

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> Any:
        """Write the namespace's LimitRange defaults into a new pod."""
        if not _handles(request):
            return request.obj
        pod = request.obj
        assert isinstance(pod, Pod)
        for lr in self._ranges(request.namespace):
            pod = apply_defaults(lr, pod)
        return pod

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Refuse a new pod outside a LimitRange's bounds (403)."""
        if not _handles(request):
            return
        pod = request.obj
        assert isinstance(pod, Pod)
        for lr in self._ranges(request.namespace):
            found = violations(lr, pod)
            if found:
                raise errors.forbidden_error(
                    request.resource.plural,
                    request.resource.group,
                    request.name,
                    errors.aggregate_text(found),
                )
