"""storage.k8s.io/v1 StorageClass: how volumes of a class are provisioned and bound.

Mirrors ``k8s.io/api/storage/v1/types.go`` (``StorageClass``: no ``spec``, its fields are
at the top level) and ``core/v1`` ``TopologySelectorTerm``. ``provisioner`` has no
``omitempty`` upstream; ``volumeBindingMode`` decides whether a claim binds at once
(``Immediate``) or waits for its first pod to be scheduled (``WaitForFirstConsumer``).
The default class carries the annotation ``storageclass.kubernetes.io/is-default-class:
"true"`` (``util.IsDefaultAnnotation``). Defaults are in ``api.storagedefaults``,
validation in ``api.validation.storage``. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init
from kubeprio.clock import parse_rfc3339

GROUP: Final = "storage.k8s.io"

BINDING_IMMEDIATE: Final = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
BINDING_MODES: Final = (BINDING_IMMEDIATE, BINDING_WAIT_FOR_FIRST_CONSUMER)
"""``supportedVolumeBindingModes`` (sorted, as ``sets.List`` prints them)."""

IS_DEFAULT_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
"""``storageutil.IsDefaultStorageClassAnnotation``."""
BETA_IS_DEFAULT_ANNOTATION: Final = "storageclass.beta.kubernetes.io/is-default-class"
"""``storageutil.BetaIsDefaultStorageClassAnnotation`` (still honoured)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySelectorLabelRequirement:
    """``key`` in ``values``: one label requirement of an allowed topology."""

    key: str | None = None
    values: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySelectorTerm:
    """Requirements ANDed together (``allowedTopologies`` entries are ORed)."""

    match_label_expressions: tuple[TopologySelectorLabelRequirement, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StorageClass:
    """A storage.k8s.io/v1 StorageClass (cluster-scoped)."""

    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "StorageClass"
    metadata: ObjectMeta = ObjectMeta()
    provisioner: str | None = None
    parameters: Mapping[str, str] | None = None
    reclaim_policy: str | None = None
    mount_options: tuple[str, ...] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: tuple[TopologySelectorTerm, ...] | None = None
    extra: JsonDict = extra_field()


def is_default_class(storage_class: StorageClass) -> bool:
    """``storageutil.IsDefaultAnnotation``: either annotation is exactly ``"true"``."""
    annotations = storage_class.metadata.annotations or {}
    return (
        annotations.get(IS_DEFAULT_ANNOTATION) == "true"
        or annotations.get(BETA_IS_DEFAULT_ANNOTATION) == "true"
    )


def default_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """``GetDefaultClass`` (``pkg/volume/util/storageclass.go``): of the classes marked
    default, the newest (by ``creationTimestamp``), then the first by name; None when
    there is none. The DefaultStorageClass admission plugin and the PV controller's
    ``assignDefaultStorageClass`` both ask it."""
    defaults = [sc for sc in classes if is_default_class(sc)]
    if not defaults:
        return None

    def created(sc: StorageClass) -> float:
        stamp = sc.metadata.creation_timestamp
        return parse_rfc3339(stamp) if stamp else 0.0

    return min(defaults, key=lambda sc: (-created(sc), sc.metadata.name or ""))


def binding_mode(storage_class: StorageClass) -> str:
    """``volumeBindingMode`` (Immediate when unset, as the API defaults it)."""
    return storage_class.volume_binding_mode or BINDING_IMMEDIATE
