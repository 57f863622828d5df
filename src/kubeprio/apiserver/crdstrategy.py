"""The CustomResourceDefinition strategy's status rules (create and update).

Mirrors v1.32's ``apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go``:
``PrepareForCreate`` resets the status to empty accepted names (``{kind: "", plural: ""}``:
neither is ``omitempty``) plus the storage version in ``storedVersions``;
``PrepareForUpdate`` keeps the stored status and appends a new storage version to
``storedVersions``. The status strategy is a row of ``apiserver.statusstrategies``
(it resets the spec only: its ``ResetObjectMetaForStatus`` call passes the new object
twice, so a ``/status`` write stores the writer's metadata; the CRD finalizer controller
removes its finalizer that way).
Generation counting is ``apiserver.strategy``'s (``GENERATION_KINDS``).
Who drives it: ``apiserver.strategy``. Pure.
"""

from __future__ import annotations

from kubeprio.api.apiextensions import (
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
    CustomResourceDefinitionStatus,
    storage_version,
)
from kubeprio.api.model import evolve


def crd_status_for_create(crd: CustomResourceDefinition) -> CustomResourceDefinitionStatus:
    """The status a new CRD starts with."""
    storage = storage_version(crd)
    return CustomResourceDefinitionStatus(
        accepted_names=CustomResourceDefinitionNames(plural="", kind=""),
        stored_versions=(storage,) if storage else None,
    )


def with_storage_version(
    crd: CustomResourceDefinition, status: CustomResourceDefinitionStatus | None
) -> CustomResourceDefinitionStatus | None:
    """``status`` (the stored one) with the CRD's storage version added to ``storedVersions``."""
    storage = storage_version(crd)
    if status is None or storage is None:
        return status
    stored = status.stored_versions or ()
    if storage in stored:
        return status
    return evolve(status, stored_versions=(*stored, storage))
