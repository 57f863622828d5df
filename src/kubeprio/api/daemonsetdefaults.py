"""Defaulting of apps/v1 DaemonSets (``SetDefaults_DaemonSet`` in ``pkg/apis/apps/v1/defaults.go``).

* ``spec.updateStrategy.type`` defaults to ``RollingUpdate``; a RollingUpdate strategy gets
  ``rollingUpdate.maxUnavailable: 1`` and ``maxSurge: 0`` where unset (an OnDelete
  strategy is left as it is);
* ``spec.revisionHistoryLimit`` defaults to 10;
* the pod template gets the pod-spec defaults every workload template gets
  (``SetDefaults_PodSpec`` and the container defaults, ``api.poddefaults``).

There is no ``replicas`` and, in apps/v1, no label copying from the template. Called by
``api.defaults.default_object``; idempotent. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.daemonset import (
    ROLLING_UPDATE,
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kubeprio.api.model import evolve

DEFAULT_MAX_UNAVAILABLE: Final = 1
DEFAULT_MAX_SURGE: Final = 0
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10


def default_update_strategy(strategy: DaemonSetUpdateStrategy | None) -> DaemonSetUpdateStrategy:
    """The strategy part of ``SetDefaults_DaemonSet``."""
    strategy = strategy or DaemonSetUpdateStrategy()
    changes: dict[str, Any] = {}
    kind = strategy.type or ROLLING_UPDATE
    if kind != strategy.type:
        changes["type"] = kind
    if kind == ROLLING_UPDATE:
        rolling = strategy.rolling_update or RollingUpdateDaemonSet()
        rolling_changes: dict[str, Any] = {}
        if rolling.max_unavailable is None:
            rolling_changes["max_unavailable"] = DEFAULT_MAX_UNAVAILABLE
        if rolling.max_surge is None:
            rolling_changes["max_surge"] = DEFAULT_MAX_SURGE
        if rolling_changes or strategy.rolling_update is None:
            changes["rolling_update"] = evolve(rolling, **rolling_changes)
    return evolve(strategy, **changes) if changes else strategy


def default_daemon_set(
    ds: DaemonSet, *, default_template: Callable[[PodTemplateSpec | None], PodTemplateSpec]
) -> DaemonSet:
    """``SetDefaults_DaemonSet`` plus the template's pod-spec defaults (``default_template``:
    ``api.poddefaults.default_pod_template``, passed in so this module stays below it)."""
    spec = ds.spec or DaemonSetSpec()
    changes: dict[str, Any] = {}
    strategy = default_update_strategy(spec.update_strategy)
    if strategy is not spec.update_strategy:
        changes["update_strategy"] = strategy
    if spec.revision_history_limit is None:
        changes["revision_history_limit"] = DEFAULT_REVISION_HISTORY_LIMIT
    template = default_template(spec.template)
    if template is not spec.template:
        changes["template"] = template
    if not changes and ds.spec is not None:
        return ds
    return evolve(ds, spec=evolve(spec, **changes))
