"""Object metadata and the meta.k8s.io/v1 types shared by every kind.

``ObjectMeta``, ``OwnerReference``, ``LabelSelector``, ``ListMeta``, ``Status`` (the
Kubernetes error/result object), ``DeleteOptions`` and ``Condition``. These mirror
``k8s.io/apimachinery/pkg/apis/meta/v1/types.go`` for the fields kubeprio uses; every
other key is kept in ``extra``. Pure data: no I/O, no behaviour beyond small accessors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from kubeprio.api.model import JsonDict, extra_field, fast_init, json_name

__all__ = [
    "ApiObject",
    "Condition",
    "DeleteOptions",
    "JsonDict",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ObjectMeta",
    "OwnerReference",
    "Preconditions",
    "Status",
    "StatusCause",
    "StatusDetails",
]


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerReference:
    """A pointer from a dependent object to its owner (``metadata.ownerReferences[]``)."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None
    block_owner_deletion: bool | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectMeta:
    """``metadata`` of every object; managedFields, selfLink and the like stay in ``extra``."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None
    owner_references: tuple[OwnerReference, ...] | None = None
    finalizers: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()

    def label(self, key: str) -> str | None:
        """Return label ``key`` or None."""
        return None if self.labels is None else self.labels.get(key)

    def annotation(self, key: str) -> str | None:
        """Return annotation ``key`` or None."""
        return None if self.annotations is None else self.annotations.get(key)

    def controller_ref(self) -> OwnerReference | None:
        """Return the owner reference with ``controller: true``, if any."""
        for ref in self.owner_references or ():
            if ref.controller:
                return ref
        return None


class ApiObject(Protocol):
    """Any stored kind: a frozen model with ``metadata`` (Pod, Node, PriorityClass, ...)."""

    @property
    def metadata(self) -> ObjectMeta:
        """The object's metadata."""
        ...


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelectorRequirement:
    """One ``matchExpressions`` entry: ``key``, ``operator`` (In/NotIn/Exists/DoesNotExist), ``values``."""

    key: str | None = None
    operator: str | None = None
    values: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    """``metav1.LabelSelector``: matchLabels AND matchExpressions. See ``api.selectors``."""

    match_labels: Mapping[str, str] | None = None
    match_expressions: tuple[LabelSelectorRequirement, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ListMeta:
    """``metadata`` of a list: the revision it reflects and the continue token."""

    resource_version: str | None = None
    continue_: str | None = json_name("continue")
    remaining_item_count: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatusCause:
    """One cause of a failure: for validation, a field error (reason, message, field path)."""

    reason: str | None = None
    message: str | None = None
    field: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatusDetails:
    """Which object a Status is about, and the causes of the failure."""

    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: tuple[StatusCause, ...] | None = None
    retry_after_seconds: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """The ``v1 Status`` kind: how the API reports failures (and some successes)."""

    api_version: str | None = "v1"
    kind: str | None = "Status"
    metadata: ListMeta | None = None
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Preconditions:
    """Conditions a delete must satisfy (uid and/or resourceVersion)."""

    uid: str | None = None
    resource_version: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteOptions:
    """``DeleteOptions``: grace period, preconditions and dependent propagation."""

    api_version: str | None = None
    kind: str | None = None
    grace_period_seconds: int | None = None
    preconditions: Preconditions | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    dry_run: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Condition:
    """``metav1.Condition`` (used by PodDisruptionBudget status)."""

    type: str | None = None
    status: str | None = None
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()
