"""core/v1 ComponentStatus: the health of a control-plane component, computed on request.

Mirrors ``k8s.io/api/core/v1/types.go`` (``ComponentStatus``, ``ComponentCondition``):
a name and one ``Healthy`` condition whose ``status`` is ``True``, ``False`` or
``Unknown``, with the component's answer in ``message`` and a failed probe's error in
``error``. ``type`` and ``status`` are always sent (no ``omitempty`` upstream);
``message`` and ``error`` only when set. Deprecated upstream since v1.19 (its
``APILifecycleDeprecated``), still served. Never stored: the API server builds the
objects when asked (``apiserver.componentstatus``). Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

HEALTHY: Final = "Healthy"
"""The one condition type (``ComponentHealthy``)."""
DEPRECATION_WARNING: Final = "v1 ComponentStatus is deprecated in v1.19+"
"""The ``Warning`` the API server adds to every componentstatuses response (its
``APILifecycleDeprecated`` is 1.19 and it names no replacement)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentCondition:
    """One condition of a component: ``Healthy`` and whether it holds."""

    type: str = HEALTHY
    status: str = "Unknown"
    message: str | None = None
    error: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentStatus:
    """A core/v1 ComponentStatus (cluster-scoped, read-only)."""

    api_version: str | None = "v1"
    kind: str | None = "ComponentStatus"
    metadata: ObjectMeta = ObjectMeta()
    conditions: tuple[ComponentCondition, ...] | None = None
    extra: JsonDict = extra_field()
