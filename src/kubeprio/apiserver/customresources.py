"""The dynamic part of the resource table: the custom resources of Established CRDs.

What it is: ``CustomResourceRegistry`` reads the stored CustomResourceDefinitions and
turns each served version of each Established one into a ``ResourceInfo`` row (model
``CustomObject``, the CRD's names, scope, short names and categories, the ``status`` and
``scale`` subresources it declares) plus the facts only custom resources have
(``CustomVersion``: schema, printer columns, scale paths). The static table
(``api.kinds``) is untouched: routes, discovery, OpenAPI and authorization take
``kinds.SERVED + registry.served()``, so a custom resource is routed, listed in
discovery and authorized exactly like a built-in kind, and only its REST verbs
(``apiserver.crrest``) differ.

The registry is rebuilt when the CRDs change (a fingerprint of their names and
resourceVersions, one store list per request: there are few CRDs). As upstream, a
CRD's resources are served from the moment it is ``Established`` until the CRD is gone:
while it terminates (``Terminating=True``, its custom resources being deleted by
``controllers.crdfinalizer``) they are still read, updated and deleted, but discovery
lists only ``delete, deletecollection, get, list, watch`` and a create is refused
(``apiserver.crrest``). Stored custom objects live under the store resource
``<plural>.<group>`` (no built-in plural has a dot). Who drives it: ``apiserver.http``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api import kinds
from kubeprio.api.apiextensions import (
    NAMESPACE_SCOPED,
    CustomObject,
    CustomResourceColumnDefinition,
    CustomResourceDefinition,
    CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale,
    is_established,
    is_terminating,
)
from kubeprio.api.kinds import ResourceInfo, Subresource
from kubeprio.api.versionsignature import VersionSignature, version_signature
from kubeprio.apiserver import crdopenapi, crtables
from kubeprio.apiserver.routes import RouteTable, Target
from kubeprio.apiserver.tables import TablePrinter
from kubeprio.store.interface import KeyPrefix, Store

SUBRESOURCE_VERBS: Final = ("get", "patch", "update")
TERMINATING_VERBS: Final[tuple[str, ...]] = ("delete", "deletecollection", "get", "list", "watch")
"""The verbs discovery lists for a terminating CRD's resources (upstream's discovery
controller drops create, update and patch; only create is refused, by the handler)."""
CRD_RESOURCE: Final = kinds.for_model(CustomResourceDefinition).plural


@dataclass(frozen=True, slots=True)
class CustomVersion:
    """One served version of a CRD: its table row and what its REST needs."""

    info: ResourceInfo
    crd: CustomResourceDefinition
    version: CustomResourceDefinitionVersion
    list_kind: str
    printer: TablePrinter

    @property
    def store_resource(self) -> str:
        """Where its objects are stored: ``<plural>.<group>`` (every version shares it)."""
        return f"{self.info.plural}.{self.info.group}"

    @property
    def terminating(self) -> bool:
        """Whether the CRD is being deleted (``Terminating=True``): no new objects."""
        return is_terminating(self.crd)

    @property
    def schema(self) -> dict[str, Any]:
        """The version's ``openAPIV3Schema`` (``{}`` when it has none)."""
        schema = self.version.schema.open_apiv3_schema if self.version.schema else None
        return schema or {}

    @property
    def has_status(self) -> bool:
        """Whether the ``status`` subresource is enabled."""
        subresources = self.version.subresources
        return subresources is not None and subresources.status is not None

    @property
    def scale(self) -> CustomResourceSubresourceScale | None:
        """The ``scale`` subresource's paths, when declared."""
        subresources = self.version.subresources
        return subresources.scale if subresources is not None else None

    def prefix(self, namespace: str | None) -> KeyPrefix:
        """The store prefix of a collection."""
        return KeyPrefix(self.store_resource, namespace)


def custom_versions(crd: CustomResourceDefinition) -> list[CustomVersion]:
    """The served versions of an Established CRD (none otherwise)."""
    spec = crd.spec
    if spec is None or spec.names is None or not is_established(crd):
        return []
    names = spec.names
    group = spec.group or ""
    found: list[CustomVersion] = []
    for version in spec.versions or ():
        if not version.served:
            continue
        subresources: list[Subresource] = []
        declared = version.subresources
        if declared is not None and declared.scale is not None:
            subresources.append(
                Subresource("scale", "autoscaling", "v1", "Scale", SUBRESOURCE_VERBS)
            )
        if declared is not None and declared.status is not None:
            subresources.append(
                Subresource(
                    "status", group, version.name or "", names.kind or "", SUBRESOURCE_VERBS
                )
            )
        info = ResourceInfo(
            group,
            version.name or "",
            names.kind or "",
            names.plural or "",
            names.singular or "",
            spec.scope == NAMESPACE_SCOPED,
            CustomObject,
            tuple(names.short_names or ()),
            tuple(names.categories or ()),
            subresources=tuple(subresources),
            verbs=TERMINATING_VERBS if is_terminating(crd) else kinds.ALL_VERBS,
        )
        columns: tuple[CustomResourceColumnDefinition, ...] = tuple(
            version.additional_printer_columns or ()
        )
        found.append(
            CustomVersion(
                info,
                crd,
                version,
                names.list_kind or f"{names.kind}List",
                crtables.custom_printer(columns),
            )
        )
    return found


class CustomResourceRegistry:
    """The served custom resources, rebuilt whenever the stored CRDs change."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._fingerprint: VersionSignature | None = None
        self._versions: dict[tuple[str, str], CustomVersion] = {}
        self._served: tuple[ResourceInfo, ...] = ()
        self._routes = RouteTable(())
        self._openapi: dict[str, bytes] = {}

    def refresh(self) -> None:
        """Re-read the CRDs; rebuild the rows when any changed."""
        crds, _ = self.store.list(KeyPrefix(CRD_RESOURCE))
        fingerprint = version_signature(crds)
        if fingerprint == self._fingerprint:
            return
        self._fingerprint = fingerprint
        versions: dict[tuple[str, str], CustomVersion] = {}
        for crd in crds:
            assert isinstance(crd, CustomResourceDefinition)
            for found in custom_versions(crd):
                versions[(found.info.api_version, found.info.plural)] = found
        self._versions = versions
        self._served = tuple(found.info for found in versions.values())
        self._routes = RouteTable(self._served)
        self._openapi = crdopenapi.custom_documents(list(versions.values()))

    def served(self) -> tuple[ResourceInfo, ...]:
        """The rows of every served custom resource version."""
        self.refresh()
        return self._served

    def routes(self) -> RouteTable:
        """Routes of the custom resources (``RouteTable`` over ``served``)."""
        self.refresh()
        return self._routes

    def openapi_documents(self) -> dict[str, bytes]:
        """OpenAPI v3 documents of the custom group versions, keyed ``apis/<g>/<v>``."""
        self.refresh()
        return self._openapi

    def version_of(self, target: Target) -> CustomVersion | None:
        """The custom version a routed target names (None for a built-in kind)."""
        if target.info.model is not CustomObject:
            return None
        return self._versions.get((target.info.api_version, target.info.plural))

    def versions_of(self, group: str, plural: str) -> list[CustomVersion]:
        """Every served version of one custom resource."""
        self.refresh()
        return [
            found
            for found in self._versions.values()
            if found.info.group == group and found.info.plural == plural
        ]
