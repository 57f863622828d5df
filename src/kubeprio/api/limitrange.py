"""core/v1 LimitRange: per-container and per-pod bounds and defaults in a namespace.

Mirrors ``k8s.io/api/core/v1/types.go``. Each ``spec.limits`` item applies to one type:
``Container`` (``min``/``max`` per container, ``default`` limits and ``defaultRequest``
requests the LimitRanger admission plugin writes into containers that set none,
``maxLimitRequestRatio``), ``Pod`` (bounds on the sum over the pod's containers; no
defaults) or ``PersistentVolumeClaim`` (storage bounds; kubeprio serves no claims, so
only validation reads it). Defaulting (``SetDefaults_LimitRangeItem``) is in
``api.defaults``, validation in ``api.validation.limitrange``, the admission plugin in
``admission.limitranger``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ResourceList
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

LIMIT_TYPE_POD: Final = "Pod"
LIMIT_TYPE_CONTAINER: Final = "Container"
LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
STANDARD_LIMIT_TYPES: Final = frozenset(
    {LIMIT_TYPE_POD, LIMIT_TYPE_CONTAINER, LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM}
)
"""``IsStandardLimitRangeType``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LimitRangeItem:
    """Bounds and defaults for one type of object (``type: Container``)."""

    type: str | None = None
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LimitRangeSpec:
    """The limit items."""

    limits: tuple[LimitRangeItem, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LimitRange:
    """A core/v1 LimitRange."""

    api_version: str | None = "v1"
    kind: str | None = "LimitRange"
    metadata: ObjectMeta = ObjectMeta()
    spec: LimitRangeSpec | None = None
    extra: JsonDict = extra_field()
