"""What goes in and out of a REST handler: the parsed request, the replies, and the
encoding of a stored object in a reply.

What it is: ``RestRequest`` (what the HTTP adapter parsed), ``Reply`` (a JSON answer with
admission warnings, which the adapter writes as ``Warning`` headers), ``TextReply`` and
``LogFollow`` (``pods/log``). A stored object travels as an ``orjson.Fragment`` of its
shared encoding (``api.encoded``); at a version served by conversion
(``api.kinds.ALTERNATE_VERSIONS``: ``autoscaling/v1`` HorizontalPodAutoscaler,
``events.k8s.io/v1`` Event) it is
converted on the way out (``object_body``) and a body converted on the way in
(``to_storage``).

Who drives it: ``apiserver.http`` builds requests and writes replies; the REST handlers
(``apiserver.rest`` and its parts) and ``apiserver.restdecoding`` use them. No HTTP imports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from kubeprio.admission.chain import UserInfo
from kubeprio.api import autoscalingv1, errors, eventsv1, gozeros
from kubeprio.api.encoded import json_fragment
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import to_sparse_dict
from kubeprio.apiserver.routes import Target

CONVERSIONS: Final[
    dict[str, tuple[Callable[[JsonDict], JsonDict], Callable[[JsonDict], JsonDict]]]
] = {
    "HorizontalPodAutoscaler@autoscaling/v1": (autoscalingv1.to_v1, autoscalingv1.from_v1),
    "Event@events.k8s.io/v1": (eventsv1.to_v1, eventsv1.from_v1),
}
"""Versions served by conversion (``api.kinds.ALTERNATE_VERSIONS``), by schema key: (from
the stored version's JSON, to it)."""


FIELD_SELECTORS: Final[dict[str, Callable[[str], str]]] = {
    "Event@events.k8s.io/v1": eventsv1.convert_field_selector,
}
"""Versions served by conversion whose field labels differ from the stored version's, by
schema key: the request's selector as the stored version's (upstream's field label
conversion functions)."""


def field_selector(info: ResourceInfo, query: Mapping[str, str]) -> str | None:
    """The request's ``fieldSelector`` in the stored version's field labels."""
    selector = query.get("fieldSelector") or None
    if selector is not None and info.storage_version:
        convert = FIELD_SELECTORS.get(info.schema_key)
        if convert is not None:
            return convert(selector) or None
    return selector


def requalified(error: errors.StatusError, info: ResourceInfo) -> errors.StatusError:
    """A NotFound, AlreadyExists or Conflict about a stored object, named as the request's
    resource: upstream's store names the resource of the request (its
    ``qualifiedResourceFromContext``), so a missing Event read through events.k8s.io is
    ``events.events.k8s.io "x" not found``. Other errors are returned unchanged."""
    details = error.status.details
    if (
        not isinstance(error, REQUALIFIED_ERRORS)
        or details is None
        or details.kind != info.plural
        or (details.group or "") == info.group
    ):
        return error
    name = details.name or ""
    stored = f'{errors.qualified(info.plural, details.group or "")} "{name}"'
    served = f'{errors.qualified(info.plural, info.group)} "{name}"'
    status = dataclasses.replace(
        error.status,
        message=error.message.replace(stored, served, 1),
        details=dataclasses.replace(details, group=info.group or None),
    )
    return type(error)(status)


REQUALIFIED_ERRORS: Final = (errors.NotFoundError, errors.AlreadyExistsError, errors.ConflictError)
"""The errors whose message names the resource of the request."""


def object_body(
    info: ResourceInfo, obj: Any, *, remember: bool = True
) -> JsonDict | orjson.Fragment:
    """A stored object as the request's version answers it: its shared encoding, or, at a
    version served by conversion, the converted document, with the zero values Go's
    encoder writes for that version's unset fields (``api.gozeros``)."""
    if info.storage_version:
        converted = CONVERSIONS[info.schema_key][0](to_sparse_dict(obj))
        root = gozeros.root_type(info.schema_key)
        return converted if root is None else gozeros.filled(converted, root)
    return json_fragment(obj, remember=remember)


def to_storage(info: ResourceInfo, data: JsonDict) -> JsonDict:
    """A request body at a version served by conversion, as the stored version's JSON."""
    if info.storage_version and isinstance(data, dict):
        return CONVERSIONS[info.schema_key][1](data)
    return data


@dataclass(frozen=True, slots=True)
class RestRequest:
    """A resource request, as the adapter parsed it."""

    method: str
    target: Target
    query: Mapping[str, str]
    accept: str = ""
    content_type: str = ""
    body: bytes = b""
    user: UserInfo | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A JSON answer: status code, body, admission warnings.

    A single stored object travels as an ``orjson.Fragment`` of its shared encoding
    (``api.encoded``): the write that stored it, or another reader, already encoded it."""

    code: int
    body: JsonDict | orjson.Fragment
    warnings: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class TextReply:
    """A plain-text answer (``pods/log``)."""

    body: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class LogFollow:
    """A followed log of a running container: the stream stays open while it runs."""

    namespace: str
    name: str
    uid: str
    container: str
