"""Admission of a write through a custom resource's ``scale`` subresource: Scales, as for
the built-in workloads.

v1.32's ``apiextensions-apiserver/pkg/registry/customresource/etcd.go`` serves
``<plural>/scale`` with ``ScaleREST``, whose ``GroupVersionKind`` is autoscaling/v1
``Scale`` in every version of every CRD, and the generic handlers
(``endpoints/handlers/update.go``, ``patch.go``) admit what that REST takes, a Scale:

* the attributes: operation UPDATE (a PATCH too), resource ``<plural>`` in the CRD's
  group and the request's version, subresource ``scale``, kind and request kind
  autoscaling/v1 ``Scale``;
* a PUT's Scale carrying a ``metadata.uid`` is a storage precondition
  (``defaultUpdatedObjectInfo.Preconditions``), checked against the stored object before
  anything else runs: a 409 with the storage layer's ``invalid object`` text
  (``apiserver.storageprecondition``, called by ``CustomResourceWrites.scale``); a PATCH
  has none;
* the mutating phase (``scaleUpdatedObjectInfo.UpdatedObject``): ``object`` is the Scale
  as sent (a PATCH: the stored Scale with the patch applied), ``oldObject`` the stored
  object's Scale (``scaleFromCustomResource``), whose ``spec.replicas`` is
  ``-2147483648`` when the object has none at ``specReplicasPath``; only after it does a
  Scale still carrying that value fail (``the spec replicas field ".spec.replicas"
  cannot be empty``, ``crscale.with_replicas``), so a webhook may fill it in. There is
  no ``ValidateScale`` and no UID check on the mutated Scale (the built-in registries'
  checks, ``apiserver.scaleadmission.admit_scale``): the mutated replicas land at
  ``specReplicasPath`` and the object's own validation judges them;
* the validating phase (``toScaleUpdateValidation``), after the object's strategy and
  validation: the Scales of the object about to be stored and of the stored one
  (``spec.replicas`` 0 when absent).

The mutating phase and the validating phase are ``apiserver.scaleadmission``'s, shared
with the built-in kinds (``mutate_scale``); what this module adds is the Scale view of a
custom object that they see (``scale_view``).

Who drives it: ``CustomResourceWrites.scale`` (``apiserver.crwrites``): HTTP PUT and PATCH
of ``<plural>/<name>/scale`` and the HPA's in-process writes
(``apiserver.crscaletargets``).
"""

from __future__ import annotations

from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.apps import Scale
from kubeprio.apiserver import crscale
from kubeprio.apiserver.crwire import versioned
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.scaleadmission import ScaleView


def scale_view(found: CustomVersion) -> ScaleView:
    """``scaleFromCustomResource`` of an object of ``found``'s kind at the request's
    version (a mistyped path is the server's error, a 500)."""
    paths = found.scale
    assert paths is not None

    def view(obj: CustomObject) -> Scale:
        return crscale.stored_scale(versioned(found, obj), paths)[0]

    return view
