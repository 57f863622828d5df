"""Arguments of the node resource plugins (upstream ``apis/config`` types and validation).

``NodeResourcesFitArgs`` and ``NodeResourcesBalancedAllocationArgs`` in the shape of
``kubescheduler.config.k8s.io/v1``, snake_case, with upstream's defaults: the
LeastAllocated strategy over cpu and memory with weight 1 each. ``validate_*`` mirror
``ValidateNodeResourcesFitArgs`` / ``ValidateNodeResourcesBalancedAllocationArgs`` and
raise ``PluginArgsError`` with upstream's aggregated field-error text. Pure data.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Final

from kubeprio.api import errors
from kubeprio.api.resources import CPU, MEMORY
from kubeprio.api.selectors import validate_label_key
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Upstream ``config.MaxCustomPriorityScore``: shape scores run 0..10."""


class ScoringStrategyType(enum.StrEnum):
    """``scoringStrategy.type``."""

    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"
    REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


@dataclasses.dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource to score and its weight (``config.ResourceSpec``)."""

    name: str
    weight: int = 1


@dataclasses.dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio function: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


DEFAULT_RESOURCES: Final = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))
"""Upstream's default scored resources (``defaultResourceSpec``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """``scoringStrategy``: the type, the resources and (RequestedToCapacityRatio) the shape."""

    type: ScoringStrategyType = ScoringStrategyType.LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] = ()
    """``requestedToCapacityRatio.shape``."""


@dataclasses.dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """``NodeResourcesFitArgs``."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()


@dataclasses.dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """``NodeResourcesBalancedAllocationArgs``."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def _resource_errors(resources: tuple[ResourceSpec, ...], path: str) -> list[errors.FieldError]:
    return [
        errors.invalid(
            f"{path}[{i}].weight",
            spec.weight,
            f"resource weight of {spec.name} not in valid range (0, 100]",
        )
        for i, spec in enumerate(resources)
        if spec.weight <= 0 or spec.weight > 100
    ]


def _shape_errors(shape: tuple[UtilizationShapePoint, ...], path: str) -> list[errors.FieldError]:
    if not shape:
        return [errors.required(path, "at least one point must be specified")]
    found: list[errors.FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            found.append(
                errors.invalid(
                    f"{path}[{i}].utilization",
                    shape[i].utilization,
                    "Utilization values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            found.append(
                errors.invalid(
                    f"{path}[{i}].utilization", point.utilization, "not in valid range [0, 100]"
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            found.append(
                errors.invalid(
                    f"{path}[{i}].score",
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return found


def validate_fit_args(args: NodeResourcesFitArgs) -> None:
    """Upstream ``ValidateNodeResourcesFitArgs``; raises :class:`PluginArgsError`."""
    found: list[errors.FieldError] = []
    for i, name in enumerate(args.ignored_resources):
        found.extend(
            errors.invalid(f"ignoredResources[{i}]", name, message)
            for message in validate_label_key(name)
        )
    for i, group in enumerate(args.ignored_resource_groups):
        if "/" in group:
            found.append(
                errors.invalid(
                    f"ignoredResourceGroups[{i}]", group, "resource group name can't contain '/'"
                )
            )
        found.extend(
            errors.invalid(f"ignoredResourceGroups[{i}]", group, message)
            for message in validate_label_key(group)
        )
    strategy = args.scoring_strategy
    if strategy.type not in tuple(ScoringStrategyType):
        found.append(
            errors.not_supported(
                "scoringStrategy.type", strategy.type, sorted(str(t) for t in ScoringStrategyType)
            )
        )
    found.extend(_resource_errors(strategy.resources, "scoringStrategy.resources"))
    if strategy.type == ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO:
        found.extend(_shape_errors(strategy.shape, "scoringStrategy.shape"))
    if found:
        raise PluginArgsError(errors.aggregate_message(found))


def validate_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs) -> None:
    """Upstream ``ValidateNodeResourcesBalancedAllocationArgs``: unique names, weight 1."""
    found: list[errors.FieldError] = []
    seen: set[str] = set()
    for i, spec in enumerate(args.resources):
        if spec.name in seen:
            found.append(errors.duplicate(f"resources[{i}].name", spec.name))
        seen.add(spec.name)
        if spec.weight != 1:
            found.append(errors.invalid(f"resources[{i}].weight", spec.weight, "must be 1"))
    if found:
        raise PluginArgsError(errors.aggregate_message(found))
