"""Defaulting of core/v1 LimitRanges (``SetObjectDefaults_LimitRange``).

Mirrors ``SetDefaults_LimitRangeItem`` in ``pkg/apis/core/v1/defaults.go`` and the generated
``SetDefaults_ResourceList`` calls of ``zz_generated.defaults.go``. For a ``Container`` item
only, in this order:

1. a resource with a ``max`` and no ``default`` gets ``default`` = ``max``;
2. a resource with a ``default`` and no ``defaultRequest`` gets ``defaultRequest`` =
   ``default``;
3. a resource with a ``min`` and still no ``defaultRequest`` gets ``defaultRequest`` =
   ``min``.

So ``kubectl get limits -o yaml`` shows the filled-in defaults a real cluster shows, and
the LimitRanger plugin reads them. Then every list of every item is rounded up to milli
precision. Upstream makes empty ``default``/``defaultRequest`` maps that JSON omits; an
item that gains nothing keeps them unset. Pure; ``api.defaults`` calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeprio.api.core import ResourceList
from kubeprio.api.limitrange import LIMIT_TYPE_CONTAINER, LimitRange, LimitRangeItem
from kubeprio.api.model import evolve

ListDefaulter = Callable[[ResourceList | None], ResourceList | None]


def _filled(target: ResourceList | None, source: ResourceList | None) -> ResourceList | None:
    """``target`` with every resource of ``source`` it lacks (``None`` stays when nothing);
    a list that grows is sorted by name, as Go writes a map."""
    missing = {name: q for name, q in (source or {}).items() if name not in (target or {})}
    if not missing:
        return target
    return dict(sorted({**(target or {}), **missing}.items()))


def default_limit_range_item(item: LimitRangeItem, default_list: ListDefaulter) -> LimitRangeItem:
    """``SetDefaults_LimitRangeItem`` then ``SetDefaults_ResourceList`` on each list."""
    default = item.default
    default_request = item.default_request
    if item.type == LIMIT_TYPE_CONTAINER:
        default = _filled(default, item.max)
        default_request = _filled(default_request, default)
        default_request = _filled(default_request, item.min)
    changes: dict[str, Any] = {}
    for attr, value in (
        ("max", item.max),
        ("min", item.min),
        ("default", default),
        ("default_request", default_request),
        ("max_limit_request_ratio", item.max_limit_request_ratio),
    ):
        rounded = default_list(value)
        if rounded is not getattr(item, attr):
            changes[attr] = rounded
    return evolve(item, **changes) if changes else item


def default_limit_range(lr: LimitRange, *, default_list: ListDefaulter) -> LimitRange:
    """The defaults of every item (``default_list``: ``api.poddefaults.default_resource_list``,
    passed in so this module stays below ``api.defaults``)."""
    spec = lr.spec
    if spec is None or not spec.limits:
        return lr
    items = tuple(default_limit_range_item(item, default_list) for item in spec.limits)
    if all(new is old for new, old in zip(items, spec.limits, strict=True)):
        return lr
    return evolve(lr, spec=evolve(spec, limits=items))
