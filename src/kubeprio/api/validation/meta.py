"""Object-metadata validation and the name rules every kind shares.

Mirrors upstream ``ValidateObjectMeta``/``ValidateObjectMetaUpdate``
(``staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go``) and the DNS-1123
name checks of ``pkg/util/validation``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ObjectMeta

DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
DNS1123_LABEL_MAX_LENGTH: Final = 63
_DNS1123_SUBDOMAIN: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_DNS1123_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")

DNS1123_SUBDOMAIN_ERROR: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1123_LABEL_ERROR: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: messages for an invalid subdomain name."""
    messages: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        messages.append(DNS1123_SUBDOMAIN_ERROR)
    return messages


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: messages for an invalid label name."""
    messages: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_LABEL_MAX_LENGTH} characters")
    if not _DNS1123_LABEL.fullmatch(value):
        messages.append(DNS1123_LABEL_ERROR)
    return messages


def validate_object_meta(metadata: ObjectMeta, info: ResourceInfo) -> list[FieldError]:
    """``ValidateObjectMeta`` for the modelled fields: name, namespace scope."""
    found: list[FieldError] = []
    name = metadata.name or ""
    if not name:
        if not metadata.generate_name:
            found.append(errors.required("metadata.name", "name or generateName is required"))
    else:
        name_errors = (
            dns1123_label_errors(name)
            if info.plural == "namespaces"
            else dns1123_subdomain_errors(name)
        )
        found.extend(errors.invalid("metadata.name", name, message) for message in name_errors)
    if info.namespaced:
        if not metadata.namespace:
            found.append(errors.required("metadata.namespace", ""))
        else:
            found.extend(
                errors.invalid("metadata.namespace", metadata.namespace, message)
                for message in dns1123_label_errors(metadata.namespace)
            )
    elif metadata.namespace:
        found.append(errors.forbidden("metadata.namespace", "not allowed on this type"))
    return found


def validate_object_meta_update(new: ObjectMeta, old: ObjectMeta) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: name, namespace and uid are immutable."""
    found: list[FieldError] = []
    for attr, path in (("name", "metadata.name"), ("namespace", "metadata.namespace")):
        if getattr(new, attr) != getattr(old, attr):
            found.append(errors.invalid(path, getattr(new, attr), "field is immutable"))
    if new.uid and old.uid and new.uid != old.uid:
        found.append(errors.invalid("metadata.uid", new.uid, "field is immutable"))
    return found
