"""apiextensions.k8s.io/v1 CustomResourceDefinition, and the untyped custom objects it declares.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go``: a CRD names
a kind (``spec.names``), its group and scope, and the versions it is served at, each with
an OpenAPI v3 ``schema``, optional ``status``/``scale`` subresources and
``additionalPrinterColumns``. The schema itself (``JSONSchemaProps``, recursive) stays a
plain JSON object: it is read by ``api.crschema`` and checked by
``api.validation.apiextensions``, never decoded into dataclasses.

``CustomObject`` is what a custom resource is stored as: the typed ``metadata`` every
object has (so the store, selectors and deletion treat it as any other object) and every
other key (``apiVersion``, ``kind``, ``spec``, ``status``, ...) untouched in ``extra``.
Custom resources are never forced through a typed model. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import Condition, ObjectMeta
from kubeprio.api.model import JsonDict, evolve, extra_field, fast_init, json_name

GROUP: Final = "apiextensions.k8s.io"
VERSION: Final = "v1"
NAMESPACE_SCOPED: Final = "Namespaced"
CLUSTER_SCOPED: Final = "Cluster"

NAMES_ACCEPTED: Final = "NamesAccepted"
ESTABLISHED: Final = "Established"
TERMINATING: Final = "Terminating"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceDefinitionNames:
    """``spec.names`` / ``status.acceptedNames``: how the kind is called in URLs and manifests."""

    plural: str | None = None
    singular: str | None = None
    short_names: tuple[str, ...] | None = None
    kind: str | None = None
    list_kind: str | None = None
    categories: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceValidation:
    """``schema``: the version's OpenAPI v3 schema, kept as raw JSON."""

    open_apiv3_schema: JsonDict | None = json_name("openAPIV3Schema")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceSubresourceScale:
    """``subresources.scale``: where the replica counts and the selector live in the object."""

    spec_replicas_path: str | None = None
    status_replicas_path: str | None = None
    label_selector_path: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceSubresources:
    """``subresources``: ``status`` (an empty object enables it) and ``scale``."""

    status: JsonDict | None = None
    scale: CustomResourceSubresourceScale | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceColumnDefinition:
    """One ``additionalPrinterColumns`` entry: a Table column filled from a JSONPath."""

    name: str | None = None
    type: str | None = None
    format: str | None = None
    description: str | None = None
    priority: int | None = None
    json_path: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceDefinitionVersion:
    """One entry of ``spec.versions``."""

    name: str | None = None
    served: bool | None = None
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema: CustomResourceValidation | None = None
    subresources: CustomResourceSubresources | None = None
    additional_printer_columns: tuple[CustomResourceColumnDefinition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceDefinitionSpec:
    """``spec``: group, names, scope, versions (conversion is kept as raw JSON)."""

    group: str | None = None
    names: CustomResourceDefinitionNames | None = None
    scope: str | None = None
    versions: tuple[CustomResourceDefinitionVersion, ...] | None = None
    conversion: JsonDict | None = None
    preserve_unknown_fields: bool | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceDefinitionStatus:
    """``status``: conditions, the names accepted, and the versions ever stored."""

    conditions: tuple[Condition, ...] | None = None
    accepted_names: CustomResourceDefinitionNames | None = None
    stored_versions: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomResourceDefinition:
    """An apiextensions.k8s.io/v1 CustomResourceDefinition (cluster-scoped)."""

    api_version: str | None = f"{GROUP}/{VERSION}"
    kind: str | None = "CustomResourceDefinition"
    metadata: ObjectMeta = ObjectMeta()
    spec: CustomResourceDefinitionSpec | None = None
    status: CustomResourceDefinitionStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CustomObject:
    """A custom resource: typed ``metadata``, every other key kept verbatim in ``extra``."""

    metadata: ObjectMeta = ObjectMeta()
    extra: JsonDict = extra_field()


def condition(crd: CustomResourceDefinition, condition_type: str) -> Condition | None:
    """The CRD's condition of ``condition_type``, if it has one."""
    status = crd.status
    for found in (status.conditions if status is not None else None) or ():
        if found.type == condition_type:
            return found
    return None


def is_established(crd: CustomResourceDefinition) -> bool:
    """Whether the CRD's ``Established`` condition is ``True`` (its resources are served)."""
    found = condition(crd, ESTABLISHED)
    return found is not None and found.status == "True"


def storage_version(crd: CustomResourceDefinition) -> str | None:
    """The name of the version marked ``storage: true`` (exactly one, once validated)."""
    spec = crd.spec
    for version in (spec.versions if spec is not None else None) or ():
        if version.storage:
            return version.name
    return None


CUSTOM_RESOURCE_CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
"""The finalizer a deleted CRD carries until its custom resources are gone."""


def is_terminating(crd: CustomResourceDefinition) -> bool:
    """Whether the CRD's ``Terminating`` condition is ``True`` (being deleted: its
    resources are still served, but new ones cannot be created)."""
    found = condition(crd, TERMINATING)
    return found is not None and found.status == "True"


def with_condition(
    crd: CustomResourceDefinition, new: Condition, now: str
) -> CustomResourceDefinition:
    """``SetCRDCondition``: ``crd`` with ``new`` replacing the condition of its type (or
    appended). The transition time is ``now`` unless the status is unchanged, in which
    case the old time is kept and only reason and message change."""
    status = crd.status or CustomResourceDefinitionStatus()
    conditions = list(status.conditions or ())
    for index, existing in enumerate(conditions):
        if existing.type != new.type:
            continue
        transition = existing.last_transition_time if existing.status == new.status else now
        conditions[index] = Condition(
            type=new.type,
            status=new.status,
            last_transition_time=transition,
            reason=new.reason,
            message=new.message,
        )
        break
    else:
        conditions.append(
            Condition(
                type=new.type,
                status=new.status,
                last_transition_time=now,
                reason=new.reason,
                message=new.message,
            )
        )
    return evolve(crd, status=evolve(status, conditions=tuple(conditions)))
