"""Validation: every field error of an object, collected, never stopping at the first.

``validate_create`` and ``validate_update`` return a list of ``FieldError``; the API
service raises one ``InvalidError`` (422) with all of them as causes. Object metadata
rules live in ``validation.meta``; each kind's rules live in a module named after its
API group (``validation.core``, ``validation.scheduling``, ...) and are listed in the
tables below, the one place that maps a model class to its validators. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.errors import FieldError
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.tenant import Tenant
from kubeprio.api.validation import scheduling, tenant
from kubeprio.api.validation.meta import validate_object_meta, validate_object_meta_update

KindValidator = Callable[[Any], list[FieldError]]
KindUpdateValidator = Callable[[Any, Any], list[FieldError]]

CREATE_VALIDATORS: Final[dict[type[Any], KindValidator]] = {
    PriorityClass: scheduling.validate_priority_class,
    Tenant: tenant.validate_tenant,
}
"""Model class -> validation of a new object (beyond metadata)."""

UPDATE_VALIDATORS: Final[dict[type[Any], KindUpdateValidator]] = {
    PriorityClass: scheduling.validate_priority_class_update,
}
"""Model class -> validation of an update (beyond metadata); defaults to the create rules."""


def validate_create(obj: object, info: ResourceInfo) -> list[FieldError]:
    """All field errors of a new object."""
    found = validate_object_meta(obj.metadata, info)  # type: ignore[attr-defined]
    validator = CREATE_VALIDATORS.get(type(obj))
    if validator is not None:
        found.extend(validator(obj))
    return found


def validate_update(new: object, old: object, info: ResourceInfo) -> list[FieldError]:
    """All field errors of an update (object rules plus immutability rules)."""
    found = validate_object_meta(new.metadata, info)  # type: ignore[attr-defined]
    found.extend(validate_object_meta_update(new.metadata, old.metadata))  # type: ignore[attr-defined]
    update_validator = UPDATE_VALIDATORS.get(type(new))
    if update_validator is not None:
        found.extend(update_validator(new, old))
    else:
        validator = CREATE_VALIDATORS.get(type(new))
        if validator is not None:
            found.extend(validator(new))
    return found
