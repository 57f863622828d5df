"""Admission of a write through ``<kind>/scale``: what webhooks and policies see is a Scale.

Upstream's workload registries (``pkg/registry/apps/deployment/storage/storage.go`` and
its replicaset, statefulset and replicationcontroller siblings) update the workload
through ``ScaleREST.Update``, and the request handler's admission runs on the Scale, not
on the workload:

* the attributes are the request's: resource ``<plural>`` in the workload's group,
  subresource ``scale``, kind autoscaling/v1 ``Scale``, operation UPDATE (the PATCH
  handler's too);
* the mutating phase runs inside ``scaleUpdatedObjectInfo.UpdatedObject``: the object is
  the new Scale (the body, or the patched view), the old object ``scaleFromDeployment``
  of the stored workload; then ``ValidateScale`` and the UID precondition; the mutated
  Scale's ``spec.replicas`` and ``resourceVersion`` move onto the workload;
* the workload goes through its strategy and validation as for any update, and the
  validating phase (``toScaleUpdateValidation``) sees the Scale views of the new and
  the stored workload.

So a webhook or policy registered for ``deployments`` alone never sees a scale write,
one for ``deployments/scale`` (or ``deployments/*``, ``*/scale``) sees it with Scales.

``admit_scale`` runs the mutating phase and returns a ``ViewAdmission`` that
``ServiceWrites.update_object`` uses for the validating phase instead of admitting the
workload itself.

Who drives it: ``ApiService.update_scale_object`` (the HTTP PUT and PATCH of the scale
subresource, and the HPA's in-process writes).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors
from kubeprio.api.apps import Scale
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import evolve
from kubeprio.apiserver import scale as scale_view

SCALE: str = "scale"


@dataclasses.dataclass(frozen=True, slots=True)
class ViewAdmission:
    """An update whose admission ran (and runs) on a view of the object, not the object:
    ``request`` is the mutating phase's attributes (its object the mutated Scale),
    ``outcome`` what that phase collected."""

    request: AdmissionRequest
    outcome: AdmissionOutcome

    @property
    def scale(self) -> Scale:
        """The Scale the mutating phase left."""
        scale = self.request.obj
        assert isinstance(scale, Scale)
        return scale

    def validation_request(self, new: Any, current: Any) -> AdmissionRequest:
        """The validating phase's attributes: the Scales of the workload about to be
        stored and of the stored one."""
        return evolve(
            self.request, obj=scale_view.scale_of(new), old_obj=scale_view.scale_of(current)
        )


def admit_scale(
    chain: AdmissionChain,
    info: ResourceInfo,
    new_scale: Scale,
    current: Any,
    *,
    user: UserInfo | None,
    dry_run: bool,
) -> ViewAdmission:
    """The mutating phase of a scale write (``scaleUpdatedObjectInfo.UpdatedObject``):
    mutate ``new_scale`` against the stored workload's Scale, then ``ValidateScale``
    and the UID precondition on the result."""
    metadata = current.metadata
    name = metadata.name or ""
    outcome = AdmissionOutcome()
    request = AdmissionRequest(
        Operation.UPDATE,
        info,
        new_scale,
        scale_view.scale_of(current),
        metadata.namespace or "",
        name,
        SCALE,
        user,
        dry_run,
    )
    mutated = chain.mutate(request, outcome)
    assert isinstance(mutated, Scale)
    scale_view.check_replicas(mutated, name)
    uid = mutated.metadata.uid
    if uid and uid != metadata.uid:
        raise errors.conflict(
            f"{info.plural}/{SCALE}",
            info.group,
            name,
            errors.uid_precondition_failed(uid, metadata.uid),
        )
    return ViewAdmission(evolve(request, obj=mutated), outcome)
