"""The options object of an admitted request: ``CreateOptions``, ``UpdateOptions`` or
``DeleteOptions`` as ``meta.k8s.io/v1`` JSON.

Upstream's ``admission.Attributes.GetOperationOptions()``: what a webhook's
AdmissionReview carries as ``request.options`` (``CreateV1AdmissionReview``) and a
ValidatingAdmissionPolicy's CEL sees as ``request.options``. For a DELETE it is the
request's DeleteOptions after the registry's ``BeforeDelete`` has read it (a pod's
grace period filled in, ``apiserver.deleteadmission``); keys in the Go struct's order,
unset ones left out (every field is ``omitempty``).

Who uses it: ``admission.webhookreview`` and ``admission.validatingpolicy``. Pure.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import AdmissionRequest, Operation
from kubeprio.api.serialization import to_dict

META_API_VERSION: Final = "meta.k8s.io/v1"
_KIND: Final = {
    Operation.CREATE: "CreateOptions",
    Operation.UPDATE: "UpdateOptions",
    Operation.DELETE: "DeleteOptions",
}


def operation_options(request: AdmissionRequest) -> dict[str, Any]:
    """The request's options object as JSON."""
    options: dict[str, Any] = {"kind": _KIND[request.operation], "apiVersion": META_API_VERSION}
    deleting = request.delete_options
    if request.operation is Operation.DELETE and deleting is not None:
        if deleting.grace_period_seconds is not None:
            options["gracePeriodSeconds"] = deleting.grace_period_seconds
        if deleting.preconditions is not None:
            preconditions = to_dict(deleting.preconditions)
            if preconditions:
                options["preconditions"] = preconditions
        if deleting.propagation_policy is not None:
            options["propagationPolicy"] = deleting.propagation_policy
    if request.dry_run:
        options["dryRun"] = ["All"]
    return options
