"""The one place that renders API errors as Kubernetes ``Status`` JSON, and warnings as headers.

What it is: pure helpers used by the HTTP adapter (``apiserver.http``) and the REST layer
(``apiserver.rest``). An ``api.errors.StatusError`` already carries the upstream
``metav1.Status`` body (code, reason, message, details with causes); this module turns it
into the JSON a client receives, with the shape upstream's ``responsewriters.ErrorNegotiated``
writes::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
     "message":"pods \\"x\\" not found","reason":"NotFound",
     "details":{"name":"x","kind":"pods"},"code":404}

``client.http`` parses that body back into the same ``StatusError`` subclass
(``api.errors.from_status``); ``tests/unit/apiserver/test_http_status.py`` keeps the two
sides honest. Also here: the success ``Status`` that ``pods/binding`` and ``pods/eviction``
answer with, the 404 for unknown paths, and the ``Warning`` header format.

Rules: no I/O, no HTTP library imports (only ``apiserver.http`` imports starlette).
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.meta import Status, StatusDetails
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import to_dict

NOT_FOUND_MESSAGE: Final = "the server could not find the requested resource"
"""Upstream's message for a path that no route serves (``NewNotFound`` with no name)."""


def status_body(status: Status) -> JsonDict:
    """Encode a ``Status`` as upstream does: typed, with an (empty) ``metadata``."""
    body = to_dict(status)
    body["kind"] = "Status"
    body["apiVersion"] = "v1"
    body.setdefault("metadata", {})
    return body


def error_body(error: errors.StatusError) -> JsonDict:
    """The JSON body of an error response."""
    return status_body(error.status)


def error_code(error: errors.StatusError) -> int:
    """The HTTP status code of an error (the Status ``code``, else the class default)."""
    return error.status.code or error.code


def success_status(code: int) -> JsonDict:
    """``{"kind":"Status",...,"status":"Success","code":code}`` (binding, eviction)."""
    return status_body(Status(status="Success", code=code))


def deleted_status(name: str, group: str, resource: str, uid: str | None) -> JsonDict:
    """What a DELETE answers for kinds that do not return the deleted object.

    Upstream ``Store.finalizeDelete``: ``details.kind`` holds the *resource* (plural).
    """
    details = errors.status_details(name=name, group=group, kind=resource, uid=uid)
    return status_body(Status(status="Success", details=details))


def path_not_found() -> errors.NotFoundError:
    """404 for an unknown path, as upstream's not-found handler answers it."""
    error = errors.NotFoundError.build(NOT_FOUND_MESSAGE, details=StatusDetails())
    assert isinstance(error, errors.NotFoundError)
    return error


ROUTER_METHOD_NOT_ALLOWED: Final = "the server does not allow this method on the requested resource"
"""go-restful's 405 for a method the route lacks, as ``NewGenericServerResponse`` words it
(no resource, so nothing is appended)."""


def method_not_allowed() -> errors.MethodNotAllowedError:
    """405 for a method the resource's routes lack: upstream's router finds no route and its
    service error handler answers ``NewGenericServerResponse(405, ...)``, details ``{}``."""
    error = errors.MethodNotAllowedError.build(ROUTER_METHOD_NOT_ALLOWED, details=StatusDetails())
    assert isinstance(error, errors.MethodNotAllowedError)
    return error


def method_not_supported(resource: str, group: str, action: str) -> errors.MethodNotAllowedError:
    """``NewMethodNotSupported``: 405 ``watch is not supported on resources of kind
    "pods.metrics.k8s.io"`` (a list handler asked to watch a storage that cannot)."""
    error = errors.MethodNotAllowedError.build(
        f'{action} is not supported on resources of kind "{errors.qualified(resource, group)}"',
        details=errors.status_details(group=group, kind=resource),
    )
    assert isinstance(error, errors.MethodNotAllowedError)
    return error


def warning_header(text: str) -> str:
    """Format an admission warning as an RFC 7234 ``Warning`` header value.

    Upstream ``warning.go``: code 299, agent ``-``, the text quoted with ``"`` and ``\\``
    escaped. kubectl prints ``Warning: <text>`` on stderr.
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
