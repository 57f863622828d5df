"""Validation of Events written through events.k8s.io/v1: upstream's strict rules.

One stored Event, two APIs, two sets of rules (``pkg/apis/core/validation/events.go``,
v1.32). A write through core/v1 gets ``legacyValidateEvent`` only
(``validation.core.validate_event``). A write through events.k8s.io/v1 gets those legacy
rules and then the strict ones, checked on the core/v1 form of the object (so the paths
name core fields: ``message``, ``count``, ``source``):

* create (``ValidateEventCreate``): object metadata (``ValidateObjectMeta``), the series
  (``count`` at least 2, ``lastObservedTime`` required), ``eventTime`` required, ``type``
  ``Normal`` or ``Warning``, and ``firstTimestamp``, ``lastTimestamp``, ``count`` and
  ``source`` unset;
* update (``ValidateEventUpdate``): object metadata update rules, the series again if it
  changed, and every descriptive field immutable (``reason`` is checked twice upstream,
  so a changed reason is reported twice).

Bad values of immutable fields print as upstream's ``field.Error`` does: strings quoted,
times through ``time.Time.String``, structs with ``%#v`` (``api.gosyntax``).

Who calls it: ``validation.validate_create``/``validate_update`` when the request came
through events.k8s.io (the API service passes the request's resource row). Pure: no I/O.
"""

from __future__ import annotations

import datetime
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Event, EventSeries, ObjectReference
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoPointer, GoStruct, go_syntax
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.validation.core import legacy_event_rules
from kubeprio.api.validation.meta import (
    validate_immutable,
    validate_object_meta,
    validate_object_meta_update,
)

EVENT_TYPES: Final = ("Normal", "Warning")
"""``v1.EventTypeNormal`` and ``v1.EventTypeWarning``."""


def validate_event_create(event: Event, info: ResourceInfo) -> list[FieldError]:
    """``ValidateEventCreate`` for an events.k8s.io/v1 request."""
    found = legacy_event_rules(event)
    found.extend(validate_object_meta(event.metadata, info))
    found.extend(_series_errors(event.series))
    if not event.event_time:
        found.append(errors.required("eventTime", ""))
    if event.type not in EVENT_TYPES:
        found.append(errors.invalid("type", "", f"has invalid value: {event.type or ''}"))
    if event.first_timestamp:
        found.append(errors.invalid("firstTimestamp", "", "needs to be unset"))
    if event.last_timestamp:
        found.append(errors.invalid("lastTimestamp", "", "needs to be unset"))
    if event.count:
        found.append(errors.invalid("count", "", "needs to be unset"))
    if event.source is not None and (event.source.component or event.source.host):
        found.append(errors.invalid("source", "", "needs to be unset"))
    return found


def validate_event_update(new: Event, old: Event) -> list[FieldError]:
    """``ValidateEventUpdate`` for an events.k8s.io/v1 request."""
    found = legacy_event_rules(new)
    found.extend(validate_object_meta_update(new.metadata, old.metadata))
    if _series(new.series) != _series(old.series):
        found.extend(_series_errors(new.series))
    for path, new_value, old_value in (
        ("involvedObject", _reference(new.involved_object), _reference(old.involved_object)),
        ("reason", new.reason or "", old.reason or ""),
        ("message", new.message or "", old.message or ""),
        ("source", _source(new), _source(old)),
        ("firstTimestamp", _time(new.first_timestamp), _time(old.first_timestamp)),
        ("lastTimestamp", _time(new.last_timestamp), _time(old.last_timestamp)),
        ("count", new.count or 0, old.count or 0),
        # Upstream checks the reason twice: a changed one is reported twice.
        ("reason", new.reason or "", old.reason or ""),
        ("type", new.type or "", old.type or ""),
        ("eventTime", _time(new.event_time), _time(old.event_time)),
        ("action", new.action or "", old.action or ""),
        ("related", _related(new.related), _related(old.related)),
        ("reportingController", new.reporting_component or "", old.reporting_component or ""),
        ("reportingInstance", new.reporting_instance or "", old.reporting_instance or ""),
    ):
        found.extend(validate_immutable(new_value, old_value, path))
    return found


def _series(series: EventSeries | None) -> tuple[int, str] | None:
    """What ``reflect.DeepEqual`` compares of a series (its time as an instant)."""
    if series is None:
        return None
    return (series.count or 0, _time(series.last_observed_time).text)


def _series_errors(series: EventSeries | None) -> list[FieldError]:
    """``validateV1EventSeries``."""
    if series is None:
        return []
    found: list[FieldError] = []
    if (series.count or 0) < 2:
        found.append(errors.invalid("series.count", "", "should be at least 2"))
    if not series.last_observed_time:
        found.append(errors.required("series.lastObservedTime", ""))
    return found


def _time(text: str | None) -> GoValue:
    """A timestamp as ``time.Time.String`` prints it (UTC: the API server's zone), the
    zero time when unset: ``2024-05-01 10:00:00.5 +0000 UTC``."""
    instant = datetime.datetime(1, 1, 1, tzinfo=datetime.UTC)
    if text:
        try:
            instant = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return GoValue(text)
        instant = instant.astimezone(datetime.UTC)
    shown = instant.strftime("%Y-%m-%d %H:%M:%S")
    if instant.microsecond:
        shown += f".{instant.microsecond:06d}".rstrip("0")
    return GoValue(f"{shown} +0000 UTC")


def _reference_struct(ref: ObjectReference) -> GoStruct:
    return GoStruct(
        "core.ObjectReference",
        (
            ("Kind", ref.kind or ""),
            ("Namespace", ref.namespace or ""),
            ("Name", ref.name or ""),
            ("UID", ref.uid or ""),
            ("APIVersion", ref.api_version or ""),
            ("ResourceVersion", ref.resource_version or ""),
            ("FieldPath", ref.field_path or ""),
        ),
    )


def _reference(ref: ObjectReference | None) -> GoValue:
    """``involvedObject`` (a struct value) as ``%#v`` prints it."""
    return GoValue(go_syntax(_reference_struct(ref or ObjectReference())))


def _related(ref: ObjectReference | None) -> GoValue:
    """``related`` (a pointer): ``ErrorBody`` follows it, and prints nil as ``null``."""
    if ref is None:
        return GoValue("null")
    return GoValue(go_syntax(GoPointer("*core.ObjectReference", _reference_struct(ref))))


def _source(event: Event) -> GoValue:
    source = event.source
    return GoValue(
        go_syntax(
            GoStruct(
                "core.EventSource",
                (
                    ("Component", (source.component if source else None) or ""),
                    ("Host", (source.host if source else None) or ""),
                ),
            )
        )
    )
