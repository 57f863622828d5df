"""Filtering and paging for list and watch: selectors as predicates, continue tokens.

``ApiService.list`` and ``ApiService.watch`` use these. Upstream parses selectors in the
request handler and checks field labels per kind; a continue token carries the key to
resume after and the revision of the first page (``storage.EncodeContinue``); later
pages report that revision. Pure: no I/O.
"""

from __future__ import annotations

import base64
import json

from kubeprio.api import errors, fields, fieldselectors, labelparser, selectors
from kubeprio.api.kinds import ResourceInfo
from kubeprio.apiserver.watch import ObjectFilter


def object_filter(
    info: ResourceInfo, label_selector: str | None, field_selector: str | None
) -> ObjectFilter | None:
    """The label and field selectors of a list or watch as one predicate (``None``: all).

    A selector that does not parse, or a field label the kind does not support
    (``fields.supported_fields``, upstream's ``GetAttrs``/field label conversion), is a 400.
    """
    label_match: ObjectFilter | None = None
    field_match: ObjectFilter | None = None
    if label_selector:
        try:
            parsed = labelparser.parse_label_selector(label_selector)
        except selectors.SelectorError as exc:
            raise errors.bad_request(str(exc)) from exc
        if not parsed.is_empty():
            label_match = lambda obj: parsed.matches(obj.metadata.labels or {})  # noqa: E731
    if field_selector:
        try:
            parsed_fields = fieldselectors.parse_field_selector(field_selector)
        except selectors.SelectorError as exc:
            raise errors.bad_request(str(exc)) from exc
        supported = fields.supported_fields(info.model)
        for requirement in parsed_fields.requirements:
            if requirement.field not in supported:
                raise errors.bad_request(f"field label not supported: {requirement.field}")
        if parsed_fields.requirements:
            field_match = parsed_fields.matcher(fields.field_getters(info.model))
    if label_match and field_match:
        return lambda obj: label_match(obj) and field_match(obj)
    return label_match or field_match


def encode_continue(last: tuple[str, str], revision: int) -> str:
    """The continue token of a page that ended at ``last`` (namespace, name), listed at ``revision``."""
    raw = json.dumps({"v": 1, "rv": revision, "start": list(last)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_continue(token: str) -> tuple[tuple[str, str], int]:
    """The (namespace, name) to continue after and the revision of a continue token; 400 if bad."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        start = data["start"]
        return (str(start[0]), str(start[1])), int(data["rv"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from None
