"""Label and field selectors of kinds served without storage-side field labels.

A kind that registers no field label conversion of its own lets a field selector name
only ``metadata.name`` and ``metadata.namespace`` (``runtime.DefaultMetaV1FieldSelector
Conversion``); anything else is a 400 ``"<field>" is not a known field selector: only
"metadata.name", "metadata.namespace"``. The label selector applies to the object's labels.

Who drives it: the computed, read-only kinds (``apiserver.resourcemetrics``,
``apiserver.componentstatus``), which filter their items in memory. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api import errors, fields, fieldselectors, labelparser, selectors

SELECTABLE_FIELDS: Final = frozenset({"metadata.name", "metadata.namespace"})
"""``runtime.DefaultMetaV1FieldSelectorConversion``: all a kind without its own has."""

ObjectFilter = Callable[[Any], bool]


def meta_selection(query: Mapping[str, str], model: type[Any]) -> ObjectFilter:
    """The request's ``labelSelector`` and ``fieldSelector`` as one predicate over objects
    of ``model`` (400 when one does not parse or names a field it cannot select by)."""
    try:
        labels = labelparser.parse_label_selector(query.get("labelSelector") or "")
        field_selector = fieldselectors.parse_field_selector(query.get("fieldSelector") or "")
    except selectors.SelectorError as exc:
        raise errors.bad_request(str(exc)) from exc
    for requirement in field_selector.requirements:
        if requirement.field not in SELECTABLE_FIELDS:
            raise errors.bad_request(
                f'"{requirement.field}" is not a known field selector: only '
                '"metadata.name", "metadata.namespace"'
            )
    matches_fields = field_selector.matcher(fields.field_getters(model))
    return lambda obj: labels.matches(obj.metadata.labels or {}) and matches_fields(obj)
