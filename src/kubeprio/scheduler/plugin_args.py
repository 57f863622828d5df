"""``pluginConfig[].args`` JSON -> each plugin's typed arguments.

The args kinds of kubescheduler.config.k8s.io/v1 that kubeprio's plugins take:
``NodeResourcesFitArgs``, ``NodeResourcesBalancedAllocationArgs``,
``InterPodAffinityArgs``, ``NodeAffinityArgs``, ``PodTopologySpreadArgs``,
``DefaultPreemptionArgs`` (validated as upstream: percentage 0..100, absolute >= 0, not
both zero) and ``VolumeBindingArgs`` (``bindTimeoutSeconds`` >= 0; ``shape`` refused while
the VolumeCapacityPriority gate is off, as in v1.32). Unknown keys are refused, as upstream's strict decoding does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api.core import NodeAffinity, TopologySpreadConstraint
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.scheduler.plugins import (
    interpodaffinity,
    nodeaffinity,
    podtopologyspread,
    volumebinding,
)
from kubeprio.scheduler.plugins.noderesources import args as resource_args
from kubeprio.scheduler.preemption import PreemptionArgs
from kubeprio.scheduler.profile import ProfileError


def _check_keys(data: JsonDict, allowed: set[str], path: str) -> None:
    unknown = sorted(set(data) - allowed - {"apiVersion", "kind"})
    if unknown:
        raise ProfileError(f'{path}: strict decoding error: unknown field "{unknown[0]}"')


def _int(data: JsonDict, key: str, default: int, path: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProfileError(f"{path}.{key}: Invalid value: {value!r}: must be an integer")
    return value


def _resources(items: Any, path: str) -> tuple[resource_args.ResourceSpec, ...]:
    if not isinstance(items, list):
        raise ProfileError(f"{path}: must be a list")
    specs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ProfileError(f"{path}[{i}].name: Required value")
        specs.append(
            resource_args.ResourceSpec(item["name"], _int(item, "weight", 1, f"{path}[{i}]"))
        )
    return tuple(specs)


def fit_args(data: JsonDict, path: str) -> resource_args.NodeResourcesFitArgs:
    """``NodeResourcesFitArgs``."""
    _check_keys(data, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}, path)
    strategy = data.get("scoringStrategy") or {}
    _check_keys(
        strategy, {"type", "resources", "requestedToCapacityRatio"}, f"{path}.scoringStrategy"
    )
    try:
        kind = resource_args.ScoringStrategyType(strategy.get("type", "LeastAllocated"))
    except ValueError:
        raise ProfileError(
            f'{path}.scoringStrategy.type: Unsupported value: "{strategy.get("type")}": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ) from None
    resources = (
        _resources(strategy["resources"], f"{path}.scoringStrategy.resources")
        if "resources" in strategy
        else resource_args.DEFAULT_RESOURCES
    )
    shape_data = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
    shape = tuple(
        resource_args.UtilizationShapePoint(
            _int(point, "utilization", 0, path), _int(point, "score", 0, path)
        )
        for point in shape_data
    )
    return resource_args.NodeResourcesFitArgs(
        ignored_resources=tuple(data.get("ignoredResources") or ()),
        ignored_resource_groups=tuple(data.get("ignoredResourceGroups") or ()),
        scoring_strategy=resource_args.ScoringStrategy(kind, resources, shape),
    )


def balanced_args(data: JsonDict, path: str) -> resource_args.NodeResourcesBalancedAllocationArgs:
    """``NodeResourcesBalancedAllocationArgs``."""
    _check_keys(data, {"resources"}, path)
    if "resources" not in data:
        return resource_args.NodeResourcesBalancedAllocationArgs()
    return resource_args.NodeResourcesBalancedAllocationArgs(
        _resources(data["resources"], f"{path}.resources")
    )


def inter_pod_affinity_args(data: JsonDict, path: str) -> interpodaffinity.InterPodAffinityArgs:
    """``InterPodAffinityArgs``."""
    _check_keys(data, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}, path)
    return interpodaffinity.InterPodAffinityArgs(
        hard_pod_affinity_weight=_int(data, "hardPodAffinityWeight", 1, path),
        ignore_preferred_terms_of_existing_pods=bool(
            data.get("ignorePreferredTermsOfExistingPods", False)
        ),
    )


def node_affinity_args(data: JsonDict, path: str) -> nodeaffinity.NodeAffinityArgs:
    """``NodeAffinityArgs``."""
    _check_keys(data, {"addedAffinity"}, path)
    added = data.get("addedAffinity")
    if added is None:
        return nodeaffinity.NodeAffinityArgs()
    try:
        return nodeaffinity.NodeAffinityArgs(
            from_dict(NodeAffinity, added, path=f"{path}.addedAffinity")
        )
    except DecodeError as exc:
        raise ProfileError(f"{exc.path}: {exc.message}") from exc


def topology_spread_args(data: JsonDict, path: str) -> podtopologyspread.PodTopologySpreadArgs:
    """``PodTopologySpreadArgs``."""
    _check_keys(data, {"defaultConstraints", "defaultingType"}, path)
    try:
        defaulting = podtopologyspread.DefaultingType(data.get("defaultingType", "System"))
    except ValueError:
        raise ProfileError(
            f'{path}.defaultingType: Unsupported value: "{data.get("defaultingType")}": '
            'supported values: "List", "System"'
        ) from None
    try:
        constraints = tuple(
            from_dict(TopologySpreadConstraint, item, path=f"{path}.defaultConstraints[{i}]")
            for i, item in enumerate(data.get("defaultConstraints") or [])
        )
    except DecodeError as exc:
        raise ProfileError(f"{exc.path}: {exc.message}") from exc
    return podtopologyspread.PodTopologySpreadArgs(constraints, defaulting)


def preemption_args(data: JsonDict, path: str) -> PreemptionArgs:
    """``DefaultPreemptionArgs`` with upstream's validation."""
    _check_keys(data, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}, path)
    percentage = _int(data, "minCandidateNodesPercentage", 10, path)
    absolute = _int(data, "minCandidateNodesAbsolute", 100, path)
    if not 0 <= percentage <= 100:
        raise ProfileError(
            f"{path}.minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]"
        )
    if absolute < 0:
        raise ProfileError(
            f"{path}.minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)"
        )
    if percentage == 0 and absolute == 0:
        raise ProfileError(
            f"{path}: Invalid value: minCandidateNodesPercentage and minCandidateNodesAbsolute: both cannot be zero"
        )
    return PreemptionArgs(percentage, absolute)


def _go_shape(shape: Any) -> str:
    """A ``[]config.UtilizationShapePoint`` as Go's ``%#v`` prints it (``field.Invalid``)."""
    points = shape if isinstance(shape, list) else []
    items = ", ".join(
        "config.UtilizationShapePoint{"
        f"Utilization:{p.get('utilization', 0) if isinstance(p, dict) else 0}, "
        f"Score:{p.get('score', 0) if isinstance(p, dict) else 0}"
        "}"
        for p in points
    )
    return f"[]config.UtilizationShapePoint{{{items}}}"


def volume_binding_args(data: JsonDict, path: str) -> volumebinding.VolumeBindingArgs:
    """``VolumeBindingArgs`` with ``ValidateVolumeBindingArgs`` (VolumeCapacityPriority off)."""
    _check_keys(data, {"bindTimeoutSeconds", "shape"}, path)
    timeout = _int(data, "bindTimeoutSeconds", volumebinding.DEFAULT_BIND_TIMEOUT_SECONDS, path)
    problems: list[str] = []
    if timeout < 0:
        problems.append(
            f"{path}.bindTimeoutSeconds: Invalid value: {timeout}: invalid BindTimeoutSeconds, "
            "should not be a negative value"
        )
    if data.get("shape") is not None:
        problems.append(
            f"{path}.shape: Invalid value: {_go_shape(data['shape'])}: unsupported when "
            "VolumeCapacityPriority feature is disabled"
        )
    if len(problems) == 1:
        raise ProfileError(problems[0])
    if problems:
        raise ProfileError(f"[{', '.join(problems)}]")
    return volumebinding.VolumeBindingArgs(timeout)


PARSERS: Final[Mapping[str, Callable[[JsonDict, str], object]]] = {
    "NodeResourcesFit": fit_args,
    "NodeResourcesBalancedAllocation": balanced_args,
    "InterPodAffinity": inter_pod_affinity_args,
    "NodeAffinity": node_affinity_args,
    "PodTopologySpread": topology_spread_args,
    "DefaultPreemption": preemption_args,
    "VolumeBinding": volume_binding_args,
}


def parse_args(name: str, data: JsonDict | None, path: str) -> object | None:
    """Typed args for plugin ``name`` (None: the plugin's defaults)."""
    if data is None:
        return None
    parser = PARSERS.get(name)
    if parser is None:
        raise ProfileError(f'{path}: plugin "{name}" does not take arguments')
    return parser(data, path)
