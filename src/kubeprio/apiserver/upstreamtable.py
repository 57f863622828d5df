"""The generated table of upstream's API types: field names, field types, required fields.

What it is: ``upstream_fields.json``, written by ``tools/gen_upstream_fields.py`` from the
pinned official Python client (itself generated from upstream's OpenAPI document). A type
entry names upstream's schema (``io.k8s.api.core.v1.PodSpec``), its required fields and
each field's type: a scalar (``string``, ``integer``, ``boolean``, ``date-time``,
``int-or-string``, ``quantity``, ``object``), a type name, ``[]T`` (list) or ``{}T`` (map).

Who drives it: ``apiserver.fieldvalidation`` (strict decoding) and ``apiserver.openapi``
(component schemas for ``kubectl explain``). Rules: read once, never mutated.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

TypeEntry = dict[str, Any]
"""``{"schema": str, "required": [str], "fields": {json name: type}}``."""


@dataclass(frozen=True, slots=True)
class UpstreamTable:
    """Kind -> root type name, and type name -> its entry."""

    roots: dict[str, str]
    types: dict[str, TypeEntry]


def element(ref: str) -> str:
    """The type a field holds once lists and maps are unwrapped (``[]V1Container`` ->
    ``V1Container``)."""
    return ref.lstrip("[]{}")


def is_object_type(ref: str) -> bool:
    """Whether ``ref`` (unwrapped) names an object type rather than a scalar."""
    return element(ref)[0].isupper()


@functools.cache
def load() -> UpstreamTable:
    """The table, parsed once."""
    raw = resources.files("kubeprio.apiserver").joinpath("upstream_fields.json").read_text()
    data = json.loads(raw)
    return UpstreamTable(roots=data["roots"], types=data["types"])
