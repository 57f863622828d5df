"""Pruning and defaulting of custom resources by their structural schema.

Mirrors v1.32's ``apiextensions-apiserver/pkg/apiserver/schema``:

* ``pruning/algorithm.go`` (``PruneWithOptions``): a field the schema does not specify is
  dropped, unless its object is ``x-kubernetes-preserve-unknown-fields``; ``items`` and
  ``additionalProperties`` schemas apply to every element; at the root (and in an
  ``x-kubernetes-embedded-resource``) ``apiVersion``, ``kind`` and ``metadata`` are kept.
  The dropped paths are returned, so strict field validation can refuse them with
  upstream's ``unknown field "spec.foo"``.
* ``defaulting/algorithm.go`` (``Default``): a ``default`` is filled in for every absent
  property (and for a ``null`` in a field that is not ``nullable``), recursively through
  objects, arrays and maps.

Works on a copy. Pure: no I/O.
"""

from __future__ import annotations

import copy
from typing import Any

_ROOT_KEPT = ("apiVersion", "kind", "metadata")


def prune(data: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``data`` without the fields ``schema`` does not specify, and their paths (document order)."""
    pruned = copy.deepcopy(data)
    dropped: list[str] = []
    _prune_object(pruned, schema, "", dropped, root=True)
    return pruned, dropped


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(value: Any, schema: Any, path: str, dropped: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        _prune_object(
            value, schema, path, dropped, root=schema.get("x-kubernetes-embedded-resource") is True
        )
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value):
            _prune(item, items, f"{path}[{i}]", dropped)


def _prune_object(
    value: dict[str, Any], schema: dict[str, Any], path: str, dropped: list[str], *, root: bool
) -> None:
    if schema.get("x-kubernetes-int-or-string") is True:
        return
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key in list(value):
        if root and key in _ROOT_KEPT:
            if key == "metadata":
                continue
            sub = properties.get(key)
            if sub is not None:
                _prune(value[key], sub, _join(path, key), dropped)
            continue
        if key in properties:
            _prune(value[key], properties[key], _join(path, key), dropped)
        elif isinstance(additional, dict):
            _prune(value[key], additional, _join(path, key), dropped)
        elif additional is True or preserve:
            continue
        else:
            dropped.append(_join(path, key))
            del value[key]


def apply_defaults(data: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the schema's defaults filled in (a new document)."""
    defaulted = copy.deepcopy(data)
    _default(defaulted, schema)
    return defaulted


def _default(value: Any, schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if not isinstance(sub, dict) or "default" not in sub:
                continue
            if key not in value or (value[key] is None and not sub.get("nullable")):
                value[key] = copy.deepcopy(sub["default"])
        for key, item in value.items():
            if key in properties:
                _default(item, properties[key])
            elif isinstance(schema.get("additionalProperties"), dict):
                _default(item, schema["additionalProperties"])
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if item is None and "default" in items and not items.get("nullable"):
                    value[i] = copy.deepcopy(items["default"])
                _default(value[i], items)
