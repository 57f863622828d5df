"""Validation of resource names and quantities (container resources, pod overhead).

Mirrors ``validateResourceRequirements``, ``validateContainerResourceName``,
``ValidateResourceQuantityValue`` and ``validateResourceQuantityHugePageValue`` in
``pkg/apis/core/validation/validation.go``, with the resource-name helpers of
``pkg/apis/core/helper/helpers.go`` (standard, native, extended, integer and
overcommittable resources). Go iterates resource maps in random order; we report
them sorted by name. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors, selectors
from kubeprio.api.core import (
    ResourceList,
)
from kubeprio.api.errors import FieldError
from kubeprio.api.quantity import Quantity, QuantityError, parse_quantity
from kubeprio.api.validation.meta import (
    child,
    key,
)

# Resource names (pkg/apis/core/helper/helpers.go).
STANDARD_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
STANDARD_RESOURCES: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
        "requests.storage",
    }
)
INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
HUGEPAGES_PREFIX: Final = "hugepages-"


# --- resource names and quantities ---------------------------------------------------------


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: unprefixed or in the ``kubernetes.io/`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    """``IsHugePageResourceName``."""
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a qualified, non-native name such as ``nvidia.com/gpu``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not selectors.validate_label_key(f"requests.{name}")


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native resources except hugepages."""
    return is_native_resource(name) and not is_hugepages(name)


def is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName``: object counts and extended resources."""
    return name in INTEGER_RESOURCES or is_extended_resource(name)


def is_standard_quota_resource(name: str) -> bool:
    """``IsStandardQuotaResourceName``: a standard name, or a hugepages request."""
    return (
        name in STANDARD_RESOURCES
        or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests.hugepages-")
    )


def is_standard_resource(name: str) -> bool:
    """``IsStandardResourceName``: the standard quota names and ``storage``."""
    return name == "storage" or is_standard_quota_resource(name)


def validate_resource_name(name: str, path: str) -> list[FieldError]:
    """``validateResourceName``: a qualified name, standard unless it has a ``/``."""
    found = [errors.invalid(path, name, m) for m in selectors.validate_label_key(name)]
    if not found and "/" not in name and not is_standard_resource(name):
        found.append(
            errors.invalid(path, name, "must be a standard resource type or fully qualified")
        )
    return found


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    """``validateContainerResourceName`` (``validateResourceName`` plus the container rules)."""
    found = validate_resource_name(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            found.append(errors.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        found.append(errors.invalid(path, name, "doesn't follow extended resource name standard"))
    return found


def validate_resource_quantity(name: str, value: Quantity, path: str) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: not negative; whole for integer resources."""
    found: list[FieldError] = []
    if value.sign() < 0:
        found.append(errors.invalid(path, str(value), "must be greater than or equal to 0"))
    if is_integer_resource(name) and value.milli_value() % 1000 != 0:
        found.append(errors.invalid(path, str(value), "must be an integer"))
    return found


def _hugepage_size(name: str) -> int | None:
    """The page size in bytes named by ``hugepages-<size>`` (``HugePageSizeFromResourceName``)."""
    try:
        size = parse_quantity(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        return None
    if size.sign() <= 0 or size.milli_value() % 1000 != 0:
        return None
    return size.value()


def _hugepage_error(name: str, value: Quantity, path: str) -> list[FieldError]:
    """``validateResourceQuantityHugePageValue``: a whole number of pages."""
    size = _hugepage_size(name)
    if size is not None and value.value() % size == 0:
        return []
    return [errors.invalid(path, str(value), f"{value} is not positive integer multiple of {name}")]


def validate_resource_requirements(
    limits: ResourceList | None, requests: ResourceList | None, path: str
) -> list[FieldError]:
    """``validateResourceRequirements`` for a container (names, quantities, requests <= limits)."""
    found: list[FieldError] = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    qos_compute = False
    hugepages = False
    limits = limits or {}
    for name in sorted(limits):
        quantity = limits[name]
        field = key(lim_path, name)
        found.extend(validate_container_resource_name(name, field))
        found.extend(validate_resource_quantity(name, quantity, field))
        if is_hugepages(name):
            hugepages = True
            found.extend(_hugepage_error(name, quantity, field))
        qos_compute = qos_compute or name in ("cpu", "memory")
    for name in sorted(requests or {}):
        quantity = (requests or {})[name]
        field = key(req_path, name)
        found.extend(validate_container_resource_name(name, field))
        found.extend(validate_resource_quantity(name, quantity, field))
        limit = limits.get(name)
        if limit is not None:
            if quantity != limit and not is_overcommit_allowed(name):
                found.append(
                    errors.invalid(
                        req_path, str(quantity), f"must be equal to {name} limit of {limit}"
                    )
                )
            elif quantity > limit:
                found.append(
                    errors.invalid(
                        req_path,
                        str(quantity),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not is_overcommit_allowed(name):
            found.append(
                errors.required(lim_path, "Limit must be set for non overcommitable resources")
            )
        if is_hugepages(name):
            hugepages = True
            found.extend(_hugepage_error(name, quantity, field))
        qos_compute = qos_compute or name in ("cpu", "memory")
    if hugepages and not qos_compute:
        found.append(errors.forbidden(path, "HugePages require cpu or memory"))
    return found
