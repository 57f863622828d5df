"""Scheduler profiles in the shape of ``KubeSchedulerConfiguration`` (kubescheduler.config.k8s.io/v1).

Parses the subset kubeprio supports — ``percentageOfNodesToScore``,
``podInitialBackoffSeconds``, ``podMaxBackoffSeconds``, and per profile
``schedulerName``, ``plugins`` (``multiPoint`` and the per-extension-point
``enabled``/``disabled`` lists, ``"*"`` disabling every default), ``pluginConfig`` args —
and expands it as upstream does: the default plugins are enabled at every extension
point they implement (multiPoint), in upstream's order, with upstream's score weights
(``pkg/scheduler/apis/config/v1/default_plugins.go``). Disabling ``DefaultPreemption``
turns preemption off. VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone are
implemented; ImageLocality and DynamicResources are accepted and ignored by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api.model import JsonDict
from kubeprio.errors import KubeprioError

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"

EXTENSION_POINTS: Final = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
)

DEFAULT_PLUGINS: Final[tuple[tuple[str, int], ...]] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("DefaultBinder", 0),
)
"""Upstream's multiPoint defaults that kubeprio implements, in order, with score weights."""

IGNORED_UPSTREAM_PLUGINS: Final = frozenset(
    {
        "ImageLocality",
        "DynamicResources",
    }
)
"""Upstream defaults that need objects kubeprio does not model (images, DRA)."""


class ProfileError(KubeprioError, ValueError):
    """An invalid scheduler configuration, with the field it is about."""


@dataclasses.dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin enabled at an extension point, with its score weight (0: default)."""

    name: str
    weight: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Profile:
    """One expanded profile: enabled plugins per extension point, in order, and their args."""

    scheduler_name: str
    enabled: Mapping[str, tuple[PluginRef, ...]]
    plugin_args: Mapping[str, JsonDict]
    percentage_of_nodes_to_score: int | None = None

    def plugin_names(self) -> list[str]:
        """Every plugin enabled somewhere, in first-seen order."""
        seen: list[str] = []
        for point in EXTENSION_POINTS:
            for ref in self.enabled.get(point, ()):
                if ref.name not in seen:
                    seen.append(ref.name)
        return seen

    def is_enabled(self, point: str, name: str) -> bool:
        """Whether ``name`` runs at ``point``."""
        return any(ref.name == name for ref in self.enabled.get(point, ()))

    def weight(self, name: str) -> int:
        """The score weight of ``name`` (1 if it was not given)."""
        for ref in self.enabled.get("score", ()):
            if ref.name == name:
                return ref.weight or 1
        return 0


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """A parsed ``KubeSchedulerConfiguration``."""

    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0


ImplementsPoint = Mapping[str, frozenset[str]]
"""Plugin name -> the extension points it implements (from the registry)."""


def _refs(data: Any, path: str) -> list[PluginRef]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise ProfileError(f"{path}: must be a list")
    refs: list[PluginRef] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ProfileError(f"{path}[{i}].name: Required value")
        weight = item.get("weight", 0)
        if not isinstance(weight, int) or isinstance(weight, bool) or weight < 0:
            raise ProfileError(
                f"{path}[{i}].weight: Invalid value: {weight!r}: must be a non-negative integer"
            )
        refs.append(PluginRef(item["name"], weight))
    return refs


def expand_profile(
    data: JsonDict,
    implements: ImplementsPoint,
    *,
    default_percentage: int | None = None,
    path: str = "profiles[0]",
) -> Profile:
    """Expand one ``profiles[]`` entry over the defaults, as upstream's multiPoint merge does."""
    plugins = data.get("plugins") or {}
    if not isinstance(plugins, dict):
        raise ProfileError(f"{path}.plugins: must be an object")
    multi = plugins.get("multiPoint") or {}
    multi_disabled = {
        ref.name for ref in _refs(multi.get("disabled"), f"{path}.plugins.multiPoint.disabled")
    }
    multi_enabled = _refs(multi.get("enabled"), f"{path}.plugins.multiPoint.enabled")
    base: list[PluginRef] = []
    if "*" not in multi_disabled:
        base = [
            PluginRef(name, weight)
            for name, weight in DEFAULT_PLUGINS
            if name not in multi_disabled
        ]
    for ref in multi_enabled:
        base = [r for r in base if r.name != ref.name] + [ref]
    for ref in base:
        if ref.name not in implements and ref.name not in IGNORED_UPSTREAM_PLUGINS:
            raise ProfileError(f'{path}.plugins.multiPoint: plugin "{ref.name}" does not exist')
    enabled: dict[str, tuple[PluginRef, ...]] = {}
    for point in EXTENSION_POINTS:
        section = plugins.get(point) or {}
        disabled = {
            ref.name for ref in _refs(section.get("disabled"), f"{path}.plugins.{point}.disabled")
        }
        explicit = _refs(section.get("enabled"), f"{path}.plugins.{point}.enabled")
        refs = (
            []
            if "*" in disabled
            else [r for r in base if point in implements.get(r.name, frozenset())]
        )
        refs = [r for r in refs if r.name not in disabled]
        for ref in explicit:
            if ref.name not in implements:
                raise ProfileError(
                    f'{path}.plugins.{point}.enabled: plugin "{ref.name}" does not exist'
                )
            if point not in implements[ref.name]:
                raise ProfileError(
                    f'{path}.plugins.{point}.enabled: plugin "{ref.name}" does not extend {point} plugin'
                )
            refs = [r for r in refs if r.name != ref.name] + [ref]
        enabled[point] = tuple(refs)
    args: dict[str, JsonDict] = {}
    for i, entry in enumerate(data.get("pluginConfig") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ProfileError(f"{path}.pluginConfig[{i}].name: Required value")
        plugin_args = entry.get("args") or {}
        if not isinstance(plugin_args, dict):
            raise ProfileError(f"{path}.pluginConfig[{i}].args: must be an object")
        args[entry["name"]] = plugin_args
    percentage = data.get("percentageOfNodesToScore", default_percentage)
    _check_percentage(percentage, f"{path}.percentageOfNodesToScore")
    return Profile(
        scheduler_name=data.get("schedulerName") or "default-scheduler",
        enabled=enabled,
        plugin_args=args,
        percentage_of_nodes_to_score=percentage,
    )


def _check_percentage(value: Any, path: str) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ProfileError(f"{path}: Invalid value: {value!r}: not in valid range [0-100]")


def _seconds(data: JsonDict, key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ProfileError(f"{key}: Invalid value: {value!r}: must be greater than 0")
    return float(value)


def parse_config(data: JsonDict | None, implements: ImplementsPoint) -> SchedulerConfig:
    """Parse a ``KubeSchedulerConfiguration`` document (``None``: all defaults)."""
    data = data or {"apiVersion": API_VERSION, "kind": KIND}
    if data.get("kind", KIND) != KIND:
        raise ProfileError(
            f'kind: Unsupported value: "{data.get("kind")}": supported values: "{KIND}"'
        )
    if data.get("apiVersion", API_VERSION) != API_VERSION:
        raise ProfileError(
            f'apiVersion: Unsupported value: "{data.get("apiVersion")}": supported values: "{API_VERSION}"'
        )
    percentage = data.get("percentageOfNodesToScore")
    _check_percentage(percentage, "percentageOfNodesToScore")
    initial = _seconds(data, "podInitialBackoffSeconds", 1.0)
    maximum = _seconds(data, "podMaxBackoffSeconds", 10.0)
    if maximum < initial:
        raise ProfileError(
            f"podMaxBackoffSeconds: Invalid value: {maximum:g}: must be greater than or equal to PodInitialBackoffSeconds"
        )
    raw_profiles: Sequence[Any] = data.get("profiles") or [{}]
    profiles = tuple(
        expand_profile(p, implements, default_percentage=percentage, path=f"profiles[{i}]")
        for i, p in enumerate(raw_profiles)
    )
    names = [p.scheduler_name for p in profiles]
    if len(set(names)) != len(names):
        raise ProfileError(
            "profiles: Duplicate value: schedulerName must be unique across profiles"
        )
    return SchedulerConfig(profiles, percentage, initial, maximum)
