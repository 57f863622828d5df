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

Custom resources with a ``scale`` subresource are admitted the same way
(``apiextensions-apiserver``'s ``ScaleREST``: ``apiserver.crscaleadmission``), with the
checks after the mutating phase that their registry makes instead of the workloads'.

``mutate_scale`` is the mutating phase every scale write shares; it returns a
``ViewAdmission`` whose validating phase sees the Scale views (``view``) of the object
about to be stored and of the stored one, instead of the object itself.
``admit_scale`` adds the workload registries' checks (``ValidateScale``, the UID).

Who drives it: ``ApiService.update_scale_object`` (the HTTP PUT and PATCH of a built-in
kind's scale subresource, and the HPA's in-process writes) and
``apiserver.crscaleadmission`` (a custom resource's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
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

ScaleView = Callable[[Any], Scale]
"""The Scale of a stored (or about to be stored) object of a scalable kind."""


@dataclasses.dataclass(frozen=True, slots=True)
class ViewAdmission:
    """An update whose admission ran (and runs) on a view of the object, not the object:
    ``request`` is the mutating phase's attributes (its object the mutated Scale),
    ``outcome`` what that phase collected, ``view`` the Scale of an object of the kind."""

    request: AdmissionRequest
    outcome: AdmissionOutcome
    view: ScaleView

    @property
    def scale(self) -> Scale:
        """The Scale the mutating phase left."""
        scale = self.request.obj
        assert isinstance(scale, Scale)
        return scale

    def validation_request(self, new: Any, current: Any) -> AdmissionRequest:
        """The validating phase's attributes (``toScaleUpdateValidation``): the Scales of
        the object about to be stored and of the stored one."""
        return evolve(self.request, obj=self.view(new), old_obj=self.view(current))


def mutate_scale(
    chain: AdmissionChain,
    info: ResourceInfo,
    new_scale: Scale,
    old_scale: Scale,
    view: ScaleView,
    *,
    user: UserInfo | None,
    dry_run: bool,
) -> ViewAdmission:
    """The mutating phase of any scale write (inside ``scaleUpdatedObjectInfo.
    UpdatedObject``): an UPDATE of ``<plural>/scale`` whose object is ``new_scale`` (the
    Scale as sent, or the patched one) and whose old object is ``old_scale`` (the stored
    object's); the names are the stored object's."""
    metadata = old_scale.metadata
    outcome = AdmissionOutcome()
    request = AdmissionRequest(
        Operation.UPDATE,
        info,
        new_scale,
        old_scale,
        metadata.namespace or "",
        metadata.name or "",
        SCALE,
        user,
        dry_run,
    )
    mutated = chain.mutate(request, outcome)
    assert isinstance(mutated, Scale)
    return ViewAdmission(evolve(request, obj=mutated), outcome, view)


def admit_scale(
    chain: AdmissionChain,
    info: ResourceInfo,
    new_scale: Scale,
    current: Any,
    *,
    user: UserInfo | None,
    dry_run: bool,
) -> ViewAdmission:
    """The mutating phase of a workload's scale write, then the workload registries'
    ``ValidateScale`` and UID precondition on the mutated Scale."""
    metadata = current.metadata
    name = metadata.name or ""
    admitted = mutate_scale(
        chain,
        info,
        new_scale,
        scale_view.scale_of(current),
        scale_view.scale_of,
        user=user,
        dry_run=dry_run,
    )
    mutated = admitted.scale
    scale_view.check_replicas(mutated, name)
    uid = mutated.metadata.uid
    if uid and uid != metadata.uid:
        raise errors.conflict(
            f"{info.plural}/{SCALE}",
            info.group,
            name,
            errors.uid_precondition_failed(uid, metadata.uid),
        )
    return admitted
