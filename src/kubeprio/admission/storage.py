"""The DefaultStorageClass and StorageObjectInUseProtection admission plugins.

Both are on by default in kube-apiserver v1.32 and act on create only (their handlers
are ``admission.NewHandler(admission.Create)``), never on subresources:

* ``DefaultStorageClass`` (``plugin/pkg/admission/storage/storageclass/setdefault``): a
  new PersistentVolumeClaim that names no class (no ``spec.storageClassName``, not even
  ``""``, and no beta annotation ``volume.beta.kubernetes.io/storage-class``) gets the
  default class's name. Several classes marked default: the newest wins, ties by name
  (``GetDefaultClass`` in ``pkg/volume/util/storageclass.go``). No default class: the
  claim stays class-less.
* ``StorageObjectInUseProtection``
  (``plugin/pkg/admission/storage/storageobjectinuseprotection``): a new claim gets the
  finalizer ``kubernetes.io/pvc-protection`` and a new volume
  ``kubernetes.io/pv-protection``, which the protection controllers
  (``controllers.pvcprotection``, ``controllers.pvprotection``) remove once the object
  is no longer in use.

Driven by ``admission.chain``; pure (reads StorageClasses through the listers).
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    BETA_STORAGE_CLASS_ANNOTATION,
    PV_PROTECTION_FINALIZER,
    PVC_PROTECTION_FINALIZER,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
)
from kubeprio.api.storageclass import default_class

DEFAULT_STORAGE_CLASS: Final = "DefaultStorageClass"
STORAGE_OBJECT_IN_USE_PROTECTION: Final = "StorageObjectInUseProtection"


def has_class(claim: PersistentVolumeClaim) -> bool:
    """``PersistentVolumeClaimHasClass``: the beta annotation or ``storageClassName``
    (even ``""``) is set."""
    annotations = claim.metadata.annotations or {}
    return BETA_STORAGE_CLASS_ANNOTATION in annotations or (
        claim.spec is not None and claim.spec.storage_class_name is not None
    )


class DefaultStorageClassPlugin:
    """Upstream ``DefaultStorageClass``: mutating only."""

    admits_kinds = (PersistentVolumeClaim,)
    ignores_subresources = True

    name = DEFAULT_STORAGE_CLASS

    def __init__(self, listers: Listers) -> None:
        self._classes = listers.storage_classes

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> Any:
        """Give a new class-less claim the default class."""
        claim = request.obj
        if (
            request.operation != Operation.CREATE
            or request.subresource
            or not isinstance(claim, PersistentVolumeClaim)
            or has_class(claim)
        ):
            return claim
        chosen = default_class(self._classes.list())
        if chosen is None:
            return claim
        spec = claim.spec or PersistentVolumeClaimSpec()
        return evolve(claim, spec=evolve(spec, storage_class_name=chosen.metadata.name))


class StorageObjectInUseProtectionPlugin:
    """Upstream ``StorageObjectInUseProtection``: mutating only."""

    admits_kinds = (PersistentVolumeClaim, PersistentVolume)
    ignores_subresources = True

    name = STORAGE_OBJECT_IN_USE_PROTECTION

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> Any:
        """Add the protection finalizer to a new claim or volume that lacks it."""
        obj = request.obj
        if request.operation != Operation.CREATE or request.subresource:
            return obj
        if isinstance(obj, PersistentVolumeClaim):
            finalizer = PVC_PROTECTION_FINALIZER
        elif isinstance(obj, PersistentVolume):
            finalizer = PV_PROTECTION_FINALIZER
        else:
            return obj
        finalizers = tuple(obj.metadata.finalizers or ())
        if finalizer in finalizers:
            return obj
        return evolve(obj, metadata=evolve(obj.metadata, finalizers=(*finalizers, finalizer)))
