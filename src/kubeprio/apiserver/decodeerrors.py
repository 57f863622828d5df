"""Upstream's words for a create or update body that cannot be read as an object.

Upstream's JSON (and YAML) serializer first reads the body's ``apiVersion`` and ``kind``
(``SimpleMetaFactory.Interpret`` in ``k8s.io/apimachinery/pkg/runtime/serializer/json/
meta.go``): ``encoding/json`` unmarshals the body into a struct of those two strings,
then ``schema.ParseGroupVersion`` splits the version. When that fails the decoder knows
no kind, and the handler (``transformDecodeError`` in ``k8s.io/apiserver/pkg/endpoints/
handlers/rest.go``) answers 400 with::

    the object provided is unrecognized (must be of type Pod): <cause> (<summary>)

where the cause is ``couldn't get version/kind; json parse error: <Go's error>`` (a
syntax error anywhere in the body, a body that is not an object, an ``apiVersion`` or
``kind`` that is not a string) or ``unexpected GroupVersion string: a/b/c``, and the
summary is the body's first 30 bytes: as text if it starts with ``{``, in hex otherwise,
``...`` if cut, ``<empty>`` if there is none. A ``null`` body decodes to an empty object.

Who drives it: ``apiserver.rest`` when it reads a create or update body. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, gojson

_FIND_KIND_TYPE: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
"""Go's name of the anonymous struct ``Interpret`` unmarshals into (``reflect.Type.String``)."""

_PARSE_ERROR: Final = "couldn't get version/kind; json parse error: "

SUMMARY_LENGTH: Final = 30
"""``summarizeData(body, 30)``."""


def summarize(body: bytes, max_length: int = SUMMARY_LENGTH) -> str:
    """``summarizeData``: how a refused body is shown at the end of the message."""
    if not body:
        return "<empty>"
    cut = body[:max_length]
    more = " ..." if len(body) > max_length else ""
    if body[:1] == b"{":
        # Go converts the bytes to a string as they are; the JSON encoder of the Status
        # then shows a broken UTF-8 sequence as U+FFFD, as decoding with "replace" does.
        return cut.decode("utf-8", "replace") + more
    return cut.hex() + more


def unrecognized(kind: str, cause: str, body: bytes) -> errors.StatusError:
    """The 400 for a body whose version and kind cannot be read."""
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {cause} ({summarize(body)})"
    )


def parse_cause(go_error: str) -> str:
    """The cause when ``encoding/json`` refuses the body with ``go_error``."""
    return _PARSE_ERROR + go_error


def interpret_cause(document: Any) -> str | None:
    """The cause ``Interpret`` finds in a decoded document, or None if it finds none.

    ``encoding/json`` keeps the first type error in document order and goes on, so the
    first of ``apiVersion`` and ``kind`` that is not a string (or null) decides. Keys are
    matched exactly; Go would also match ``Kind`` or ``APIVERSION``, which no client sends.
    """
    if document is None:
        return None
    if not isinstance(document, dict):
        target = f"Go value of type {_FIND_KIND_TYPE}"
        return parse_cause(f"json: cannot unmarshal {gojson.value_kind(document)} into {target}")
    for key, value in document.items():
        if key in ("apiVersion", "kind") and value is not None and not isinstance(value, str):
            # The struct is anonymous, so the field's path starts with an empty name.
            target = f"Go struct field .{key} of type string"
            return parse_cause(f"json: cannot unmarshal {gojson.value_kind(value)} into {target}")
    version = document.get("apiVersion")
    if isinstance(version, str) and version != "/" and version.count("/") > 1:
        return f"unexpected GroupVersion string: {version}"
    return None
