"""What a DELETE of a CustomResourceDefinition does: mark it and hand it to the finalizer.

Mirrors v1.32's ``apiextensions-apiserver/pkg/registry/customresourcedefinition/etcd.go``
(``REST.Delete``): the CRD's own uid and resourceVersion preconditions are checked first
(a mismatch is a 409 ``Precondition failed: UID in precondition: <a>, UID in object
meta: <b>``); then, on the first delete, the CRD is not removed but updated in one write:
``deletionTimestamp`` = now, the ``customresourcecleanup.apiextensions.k8s.io``
finalizer added, and the condition ``Terminating=True`` (``InstanceDeletionPending``,
``CustomResourceDefinition marked for deletion; CustomResource deletion will begin
soon``). The generic delete does not run, so neither the generation nor a grace period
is set (a nil grace period lets the last finalizer's removal delete the CRD,
``ShouldDeleteDuringUpdate``). A later delete of a CRD already marked is the generic one
(``apiserver.deletion``). The finalizer controller (``controllers.crdfinalizer``) then
removes the custom resources and the finalizer.

Who drives it: ``ApiService.delete_object``. Pure: the time is passed in.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.apiextensions import (
    CUSTOM_RESOURCE_CLEANUP_FINALIZER,
    TERMINATING,
    CustomResourceDefinition,
    with_condition,
)
from kubeprio.api.meta import Condition
from kubeprio.api.model import evolve
from kubeprio.apiserver.deletion import DeletePlan
from kubeprio.client.protocol import DeleteRequest

CRD_PLURAL: Final = "customresourcedefinitions"
CRD_GROUP: Final = "apiextensions.k8s.io"

DELETION_PENDING: Final = Condition(
    type=TERMINATING,
    status="True",
    reason="InstanceDeletionPending",
    message="CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
)


def check_preconditions(crd: CustomResourceDefinition, options: DeleteRequest) -> None:
    """``REST.Delete``'s own precondition checks (their texts differ from the generic
    ``BeforeDelete`` ones)."""
    pre = options.preconditions
    if pre is None:
        return
    name = crd.metadata.name or ""
    if pre.uid is not None and pre.uid != crd.metadata.uid:
        raise errors.conflict(
            CRD_PLURAL,
            CRD_GROUP,
            name,
            errors.uid_precondition_failed(pre.uid, crd.metadata.uid),
        )
    if pre.resource_version is not None and pre.resource_version != crd.metadata.resource_version:
        raise errors.conflict(
            CRD_PLURAL,
            CRD_GROUP,
            name,
            errors.resource_version_precondition_failed(
                pre.resource_version, crd.metadata.resource_version
            ),
        )


def plan_first_delete(crd: CustomResourceDefinition, now: str) -> DeletePlan | None:
    """The plan of a delete of a CRD not yet marked (None when it already is: the
    generic plan applies)."""
    meta = crd.metadata
    if meta.deletion_timestamp:
        return None
    finalizers = tuple(meta.finalizers or ())
    if CUSTOM_RESOURCE_CLEANUP_FINALIZER not in finalizers:
        finalizers = (*finalizers, CUSTOM_RESOURCE_CLEANUP_FINALIZER)
    marked = evolve(crd, metadata=evolve(meta, deletion_timestamp=now, finalizers=finalizers))
    return DeletePlan(with_condition(marked, DELETION_PENDING, now), False, None)


def create_while_terminating(plural: str, group: str) -> errors.MethodNotAllowedError:
    """The handler's refusal of a new custom resource of a terminating CRD
    (``crdHandler.serveResource``): ``NewMethodNotSupported`` with its message replaced."""
    error = errors.MethodNotAllowedError.build(
        "create not allowed while custom resource definition is terminating",
        details=errors.status_details(group=group, kind=plural),
    )
    assert isinstance(error, errors.MethodNotAllowedError)
    return error
