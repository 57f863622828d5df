"""LimitRange validation (core/v1).

Mirrors ``ValidateLimitRange`` of upstream ``pkg/apis/core/validation/validation.go``
(``validateLimitRangeTypeName``, ``validateLimitRangeResourceName``); the registry
(``pkg/registry/core/limitrange/strategy.go``) runs the same rules on update. For each
``spec.limits[i]``:

* ``type`` is a qualified name and, without a ``/``, one of ``Pod``, ``Container``,
  ``PersistentVolumeClaim`` (``must be a standard limit type or fully qualified``); a type
  may appear once (``Duplicate value``);
* resource names: container names (``cpu``, ``memory``, ``ephemeral-storage``, hugepages,
  extended resources) for ``Pod`` and ``Container``, any resource name otherwise;
* a ``Pod`` item may not set ``default`` or ``defaultRequest`` (``may not be specified
  when `type` is 'Pod'``); a ``PersistentVolumeClaim`` item needs a ``storage`` min or max;
* per resource: min <= defaultRequest <= default <= max and min <= max, each broken
  rule with its own text (``min value 200m is greater than max value 100m``);
  ``maxLimitRequestRatio`` at least 1 and at most max/min; and for resources that may
  not be overcommitted (hugepages, extended resources) default equal to defaultRequest.

The bad value of a comparison is the quantity, printed as its string (``Invalid value:
"200m"``), as later releases' ``field.Error`` prints it. v1.32's ``ErrorBody`` printed a
Quantity value with ``%#v``, its Go struct, whose inner form kubeprio does not keep
(docs/validation.md, "How bad values are printed"). Go iterates maps in random
order; names are reported sorted. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import ResourceList
from kubeprio.api.errors import FieldError
from kubeprio.api.limitrange import (
    LIMIT_TYPE_CONTAINER,
    LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM,
    LIMIT_TYPE_POD,
    STANDARD_LIMIT_TYPES,
    LimitRange,
    LimitRangeItem,
)
from kubeprio.api.model import INT64_MAX
from kubeprio.api.quantity import Quantity
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    key,
    qualified_name_errors,
)
from kubeprio.api.validation.resources import (
    is_overcommit_allowed,
    validate_container_resource_name,
    validate_resource_name,
)

MAX_MILLI_VALUE: Final = INT64_MAX // 1000
"""``resource.MaxMilliValue``: past it, upstream compares whole units, not milli-units."""
_ONE: Final = Quantity.from_int(1)


def _validate_type_name(value: str, path: str) -> list[FieldError]:
    """``validateLimitRangeTypeName``."""
    found = qualified_name_errors(value, path)
    if found:
        return found
    if "/" not in value and value not in STANDARD_LIMIT_TYPES:
        return [errors.invalid(path, value, "must be a standard limit type or fully qualified")]
    return []


def _validate_resource_name(limit_type: str, name: str, path: str) -> list[FieldError]:
    """``validateLimitRangeResourceName``: container names for Pod and Container items,
    ``validateResourceName`` for the others."""
    if limit_type in (LIMIT_TYPE_POD, LIMIT_TYPE_CONTAINER):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _names(
    limit_type: str, resources: ResourceList | None, path: str, keys: set[str]
) -> list[FieldError]:
    found: list[FieldError] = []
    for name in sorted(resources or {}):
        found.extend(_validate_resource_name(limit_type, name, key(path, name)))
        keys.add(name)
    return found


def _max_ratio_limit(min_q: Quantity, max_q: Quantity, ratio: Quantity) -> tuple[float, float]:
    """The ratio and max/min as upstream compares them: milli-units when all three fit."""
    ratio_value = float(ratio.value())
    min_value = min_q.value()
    max_value = max_q.value()
    if (
        ratio.value() < MAX_MILLI_VALUE
        and min_value < MAX_MILLI_VALUE
        and max_value < MAX_MILLI_VALUE
    ):
        ratio_value = float(ratio.milli_value()) / 1000
        min_value = min_q.milli_value()
        max_value = max_q.milli_value()
    if min_value == 0:
        # Go's float division: +Inf, or NaN for 0/0; neither is ever exceeded.
        return ratio_value, float("inf") if max_value > 0 else float("nan")
    return ratio_value, float(max_value) / float(min_value)


def _compare(path: str, name: str, item: LimitRangeItem) -> list[FieldError]:
    """The per-resource ordering rules of one item, in upstream's order."""
    min_q = (item.min or {}).get(name)
    max_q = (item.max or {}).get(name)
    default = (item.default or {}).get(name) if item.type != LIMIT_TYPE_POD else None
    default_request = (
        (item.default_request or {}).get(name) if item.type != LIMIT_TYPE_POD else None
    )
    ratio = (item.max_limit_request_ratio or {}).get(name)
    found: list[FieldError] = []

    def bad(field: str, value: Quantity, detail: str) -> None:
        found.append(errors.invalid(key(child(path, field), name), str(value), detail))

    if min_q is not None and max_q is not None and min_q > max_q:
        bad("min", min_q, f"min value {min_q} is greater than max value {max_q}")
    if default_request is not None and min_q is not None and min_q > default_request:
        bad(
            "defaultRequest",
            default_request,
            f"min value {min_q} is greater than default request value {default_request}",
        )
    if default_request is not None and max_q is not None and default_request > max_q:
        bad(
            "defaultRequest",
            default_request,
            f"default request value {default_request} is greater than max value {max_q}",
        )
    if default_request is not None and default is not None and default_request > default:
        bad(
            "defaultRequest",
            default_request,
            f"default request value {default_request} is greater than default limit value "
            f"{default}",
        )
    if default is not None and min_q is not None and min_q > default:
        bad("default", min_q, f"min value {min_q} is greater than default value {default}")
    if default is not None and max_q is not None and default > max_q:
        # Upstream reports the max as the bad value here.
        bad("default", max_q, f"default value {default} is greater than max value {max_q}")
    if ratio is not None and ratio < _ONE:
        bad("maxLimitRequestRatio", ratio, f"ratio {ratio} is less than 1")
    if ratio is not None and min_q is not None and max_q is not None:
        ratio_value, limit = _max_ratio_limit(min_q, max_q, ratio)
        if ratio_value > limit:
            bad("maxLimitRequestRatio", ratio, f"ratio {ratio} is greater than max/min = {limit:f}")
    if (
        not is_overcommit_allowed(name)
        and default is not None
        and default_request is not None
        and default != default_request
    ):
        bad(
            "defaultRequest",
            default_request,
            f"default value {default} must equal to defaultRequest value {default_request} "
            f"in {name}",
        )
    return found


def _validate_item(item: LimitRangeItem, path: str, seen: set[str]) -> list[FieldError]:
    limit_type = item.type or ""
    found = _validate_type_name(limit_type, child(path, "type"))
    if limit_type in seen:
        found.append(errors.duplicate(child(path, "type"), limit_type))
    seen.add(limit_type)
    keys: set[str] = set()
    found.extend(_names(limit_type, item.max, child(path, "max"), keys))
    found.extend(_names(limit_type, item.min, child(path, "min"), keys))
    if limit_type == LIMIT_TYPE_POD:
        if item.default:
            found.append(
                errors.forbidden(
                    child(path, "default"), "may not be specified when `type` is 'Pod'"
                )
            )
        if item.default_request:
            found.append(
                errors.forbidden(
                    child(path, "defaultRequest"), "may not be specified when `type` is 'Pod'"
                )
            )
    else:
        found.extend(_names(limit_type, item.default, child(path, "default"), keys))
        found.extend(_names(limit_type, item.default_request, child(path, "defaultRequest"), keys))
    if limit_type == LIMIT_TYPE_PERSISTENT_VOLUME_CLAIM and not (
        "storage" in (item.min or {}) or "storage" in (item.max or {})
    ):
        found.append(
            errors.required(
                child(path, "limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            )
        )
    found.extend(
        _names(limit_type, item.max_limit_request_ratio, child(path, "maxLimitRequestRatio"), keys)
    )
    for name in sorted(keys):
        found.extend(_compare(path, name, item))
    return found


def validate_limit_range(lr: LimitRange) -> list[FieldError]:
    """``ValidateLimitRange`` beyond metadata: every item of ``spec.limits``."""
    found: list[FieldError] = []
    seen: set[str] = set()
    limits = lr.spec.limits if lr.spec is not None else None
    for position, item in enumerate(limits or ()):
        found.extend(_validate_item(item, index("spec.limits", position), seen))
    return found


def validate_limit_range_update(new: LimitRange, old: LimitRange) -> list[FieldError]:
    """The registry's ``ValidateUpdate``: the create rules, every field may change."""
    return validate_limit_range(new)


CREATE: Final[dict[type[Any], KindValidator]] = {LimitRange: validate_limit_range}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {LimitRange: validate_limit_range_update}
