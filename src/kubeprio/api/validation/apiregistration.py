"""APIService validation.

Mirrors v1.32 ``k8s.io/kube-aggregator/pkg/apis/apiregistration/validation/validation.go``:

* ``ValidateAPIService``: the name is a path segment and must be ``<version>.<group>``
  (checked by the object-metadata rules: ``apiservices`` names are path segments in
  ``validation.meta``; the ``version.group`` rule needs the spec, so it is here); only
  ``v1`` may have an empty group; the group is a DNS subdomain and the version a DNS-1035
  label; ``groupPriorityMinimum`` in (0, 20000] and ``versionPriority`` in (0, 1000]; a
  local APIService (no ``service``) has neither ``caBundle`` nor
  ``insecureSkipTLSVerify``; a service names its namespace and name, and
  ``insecureSkipTLSVerify`` excludes a ``caBundle``.
* ``ValidateAPIServiceUpdate``: the metadata update rules and all of the above again.
* ``ValidateAPIServiceStatusUpdate``: each condition's status is True, False or Unknown.

Pure.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.apiregistration import APIService, APIServiceSpec, api_service_name
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    dns1035_label_errors,
    dns1123_subdomain_errors,
)

CONDITION_STATUSES: Final = ("True", "False", "Unknown")


def _name_errors(service: APIService) -> list[FieldError]:
    """The ``version.group`` half of upstream's name function (the path-segment half runs
    with the other metadata rules, and a name failing it gets no second message)."""
    spec = service.spec or APIServiceSpec()
    required = api_service_name(spec.group or "", spec.version or "")
    name = service.metadata.name or ""
    if not name or "/" in name or "%" in name or name in (".", "..") or name == required:
        return []
    message = f'must be `spec.version+"."+spec.group`: "{required}"'
    return [errors.invalid("metadata.name", name, message)]


def validate_api_service(service: APIService) -> list[FieldError]:
    """``ValidateAPIService`` beyond the generic metadata rules."""
    found = _name_errors(service)
    spec = service.spec or APIServiceSpec()
    group, version = spec.group or "", spec.version or ""
    if not group and version != "v1":
        found.append(
            errors.required(
                "spec.group", "only v1 may have an empty group and it better be legacy kube"
            )
        )
    if group:
        found.extend(
            errors.invalid("spec.group", group, m) for m in dns1123_subdomain_errors(group)
        )
    found.extend(errors.invalid("spec.version", version, m) for m in dns1035_label_errors(version))
    group_priority = spec.group_priority_minimum or 0
    if group_priority <= 0 or group_priority > 20000:
        found.append(
            errors.invalid(
                "spec.groupPriorityMinimum", group_priority, "must be positive and less than 20000"
            )
        )
    version_priority = spec.version_priority or 0
    if version_priority <= 0 or version_priority > 1000:
        found.append(
            errors.invalid(
                "spec.versionPriority", version_priority, "must be positive and less than 1000"
            )
        )
    ca_bundle = spec.ca_bundle or b""
    skip_verify = bool(spec.insecure_skip_tls_verify)
    if spec.service is None:
        if ca_bundle:
            found.append(
                errors.invalid(
                    "spec.caBundle",
                    f"{len(ca_bundle)} bytes",
                    "local APIServices may not have a caBundle",
                )
            )
        if skip_verify:
            found.append(
                errors.invalid(
                    "spec.insecureSkipTLSVerify",
                    True,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return found
    if not spec.service.namespace:
        found.append(errors.required("spec.service.namespace", ""))
    if not spec.service.name:
        found.append(errors.required("spec.service.name", ""))
    if skip_verify and ca_bundle:
        found.append(
            errors.invalid(
                "spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"
            )
        )
    return found


def validate_api_service_update(new: APIService, old: APIService) -> list[FieldError]:
    """``ValidateAPIServiceUpdate``: the create rules again (metadata by the caller)."""
    return validate_api_service(new)


def validate_api_service_status(new: APIService, old: APIService) -> list[FieldError]:
    """``ValidateAPIServiceStatus``: condition statuses are True, False or Unknown."""
    found: list[FieldError] = []
    status = new.status
    for position, condition in enumerate((status.conditions if status else None) or ()):
        value = condition.status or ""
        if value not in CONDITION_STATUSES:
            found.append(
                errors.not_supported(
                    f"status.conditions[{position}].status", value, CONDITION_STATUSES
                )
            )
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {APIService: validate_api_service}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {APIService: validate_api_service_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    APIService: validate_api_service_status
}
REVALIDATE_META_ON_UPDATE: Final[frozenset[type[Any]]] = frozenset({APIService})
"""``ValidateAPIServiceUpdate`` calls ``ValidateAPIService``, which checks the metadata as
on create."""
