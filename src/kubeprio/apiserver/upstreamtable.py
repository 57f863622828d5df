"""The generated table of upstream's API types: field names, field types, required fields.

What it is: ``upstream_fields.json``, written by ``tools/gen_upstream_fields.py`` from the
pinned official Python client (itself generated from upstream's OpenAPI document). A type
entry names upstream's schema (``io.k8s.api.core.v1.PodSpec``), its required fields and
each field's type: a scalar (``string``, ``integer``, ``boolean``, ``date-time``, ``byte``,
``int-or-string``, ``quantity``, ``object``), a type name, ``[]T`` (list) or ``{}T`` (map).

``served()`` adds kubeprio's own kind (Tenant), written here in the same notation, so
it gets strict field validation and an ``explain`` schema like a CRD with a structural
schema. Who drives it: ``apiserver.fieldvalidation`` (strict decoding) and
``apiserver.openapi`` (component schemas for ``kubectl explain``). Rules: read once,
never mutated.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from kubeprio.apiserver.apiregistrationtable import APIREGISTRATION_ROOTS, APIREGISTRATION_TYPES

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


KUBEPRIO_ROOTS: Final = {"Tenant": "KubeprioV1alpha1Tenant"}
"""kubeprio's own kinds, in the generated table's notation."""
KUBEPRIO_TYPES: Final[dict[str, TypeEntry]] = {
    "KubeprioV1alpha1Tenant": {
        "schema": "io.kubeprio.v1alpha1.Tenant",
        "required": [],
        "fields": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "V1ObjectMeta",
            "spec": "KubeprioV1alpha1TenantSpec",
            "status": "object",
        },
    },
    "KubeprioV1alpha1TenantSpec": {
        "schema": "io.kubeprio.v1alpha1.TenantSpec",
        "required": [],
        "fields": {
            "enforcement": "string",
            "groups": "[]string",
            "namespaceSelector": "V1LabelSelector",
            "namespaces": "[]string",
            "priorityClasses": "KubeprioV1alpha1TenantPriorityClasses",
            "users": "[]string",
        },
    },
    "KubeprioV1alpha1TenantPriorityClasses": {
        "schema": "io.kubeprio.v1alpha1.TenantPriorityClasses",
        "required": [],
        "fields": {
            "allowed": "[]string",
            "allowedRegex": "string",
            "default": "string",
            "maxValue": "integer",
        },
    },
}


APIEXTENSIONS_ROOTS: Final = {"CustomResourceDefinition": "V1CustomResourceDefinition"}
"""apiextensions.k8s.io kinds: upstream's, but outside k8s.io/api, which the generated
table is cut to (``tools/gen_upstream_fields.py``); their top level is written here, with
``spec`` and ``status`` free-form (no strict-decoding checks below them)."""
APIEXTENSIONS_TYPES: Final[dict[str, TypeEntry]] = {
    "V1CustomResourceDefinition": {
        "schema": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        "required": ["spec"],
        "fields": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "V1ObjectMeta",
            "spec": "object",
            "status": "object",
        },
    },
}


@functools.cache
def served() -> UpstreamTable:
    """Upstream's table (``upstream_fields.json``, parsed once) plus kubeprio's own kinds:
    every kind the server serves."""
    raw = resources.files("kubeprio.apiserver").joinpath("upstream_fields.json").read_text()
    data = json.loads(raw)
    return UpstreamTable(
        {**data["roots"], **KUBEPRIO_ROOTS, **APIEXTENSIONS_ROOTS, **APIREGISTRATION_ROOTS},
        {**data["types"], **KUBEPRIO_TYPES, **APIEXTENSIONS_TYPES, **APIREGISTRATION_TYPES},
    )
