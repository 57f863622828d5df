"""events.k8s.io/v1 Event: a view of the stored core/v1 Event.

A v1.32 API server stores one kind of Event and serves it twice, at ``/api/v1`` and at
``/apis/events.k8s.io/v1``; both read and write the same objects (same names, same
resourceVersions). Upstream converts through the internal type
(``pkg/apis/events/v1/conversion.go``): most fields keep their names, and these are renamed
(events.k8s.io name <- core name)::

    regarding                <- involvedObject
    note                     <- message
    reportingController      <- reportingComponent
    deprecatedSource         <- source
    deprecatedFirstTimestamp <- firstTimestamp
    deprecatedLastTimestamp  <- lastTimestamp
    deprecatedCount          <- count

``eventTime``, ``series``, ``action``, ``reason``, ``type``, ``related`` and
``reportingInstance`` are the same field in both. What Go's encoder always writes is
written here too: ``eventTime`` and the two deprecated timestamps (``null`` when unset),
``regarding`` and ``deprecatedSource`` (plain structs, ``{}`` when empty).

Field selectors are renamed the same way (``AddFieldLabelConversionsForEvent`` there):
``regarding.*`` and ``reportingController`` select on the core fields; the core names
themselves (``involvedObject.name``) are not supported at this version.

Works on JSON documents (what the wire carries), so the rest of the system sees core/v1
only. Who calls it: ``apiserver.restmessages`` for requests at ``/apis/events.k8s.io/v1``
and ``apiserver.restreads`` for their field selectors. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from kubeprio.api import errors, fieldselectors, selectors
from kubeprio.api.model import JsonDict

GROUP: Final = "events.k8s.io"
API_VERSION: Final = f"{GROUP}/v1"

_RENAMED: Final = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)
"""(core name, events.k8s.io name) of the fields the conversion renames."""

_SHARED: Final = (
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
)
"""Fields with one name in both versions."""

_V1_ORDER: Final = (
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding",
    "related",
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
)
"""events.k8s.io/v1 ``Event``'s fields in the order of its Go struct (and of its JSON)."""

_ALWAYS_WRITTEN: Final[dict[str, object]] = {
    "eventTime": None,
    "regarding": {},
    "deprecatedSource": {},
    "deprecatedFirstTimestamp": None,
    "deprecatedLastTimestamp": None,
}
"""Fields Go's encoder writes even when unset (no ``omitempty``, or a struct value), with
what it writes then."""

FIELD_LABELS: Final = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}
"""The field labels events.k8s.io/v1 accepts, and the core field each selects on."""


def to_v1(core: JsonDict) -> JsonDict:
    """A core/v1 Event document as events.k8s.io/v1 answers it."""
    fields: JsonDict = {name: core.get(name) for name in _SHARED}
    for core_name, v1_name in _RENAMED:
        fields[v1_name] = core.get(core_name)
    out: JsonDict = {"kind": "Event", "apiVersion": API_VERSION, "metadata": core.get("metadata")}
    if out["metadata"] is None:
        out["metadata"] = {}
    for name in _V1_ORDER:
        value = fields[name]
        if value is None or (name == "deprecatedCount" and value == 0):
            if name in _ALWAYS_WRITTEN:
                out[name] = _ALWAYS_WRITTEN[name]
            continue
        out[name] = value
    return out


def from_v1(v1: JsonDict) -> JsonDict:
    """An events.k8s.io/v1 Event document (a request body) as the core/v1 document it
    stores; fields core/v1 does not know are left out, as a conversion drops them."""
    out: JsonDict = {"apiVersion": "v1", "kind": "Event"}
    if "metadata" in v1:
        out["metadata"] = v1["metadata"]
    for core_name, v1_name in _RENAMED:
        if v1.get(v1_name) is not None:
            out[core_name] = v1[v1_name]
    for name in _SHARED:
        if v1.get(name) is not None:
            out[name] = v1[name]
    return out


def convert_field_selector(text: str) -> str:
    """An events.k8s.io/v1 field selector as the core fields it selects on; a label
    outside ``FIELD_LABELS`` is upstream's 400 (``field label not supported: ...``)."""
    try:
        parsed = fieldselectors.parse_field_selector(text)
    except selectors.SelectorError as exc:
        raise errors.bad_request(str(exc)) from exc
    terms: list[str] = []
    for requirement in parsed.requirements:
        mapped = FIELD_LABELS.get(requirement.field)
        if mapped is None:
            raise errors.bad_request(f"field label not supported: {requirement.field}")
        terms.append(str(dataclasses.replace(requirement, field=mapped)))
    return ",".join(terms)
