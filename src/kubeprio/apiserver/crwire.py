"""The wire form of a custom object: its JSON document, at a served version, and back.

What it is: upstream serves custom objects as ``unstructured.Unstructured`` maps (keys
sorted as Go encodes a map), and its ``None`` conversion strategy only rewrites
``apiVersion`` between versions that share one schema; ``CustomObject`` keeps the
metadata typed and the rest as the ``extra`` dict.

Who drives it: the custom resource REST (``apiserver.crreads``, ``apiserver.crwrites``)
and the write bodies' validation (``apiserver.crbodies``). Pure.
"""

from __future__ import annotations

from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.customresources import CustomVersion


def object_json(obj: CustomObject) -> JsonDict:
    """The wire form: keys sorted, as Go encodes an unstructured map."""
    document = {**obj.extra, "metadata": to_dict(obj.metadata)}
    return dict(sorted(document.items()))


def versioned(found: CustomVersion, obj: CustomObject) -> JsonDict:
    """The object at the request's version (versions share one schema-less conversion:
    upstream's ``None`` strategy only rewrites ``apiVersion``)."""
    document = object_json(obj)
    document["apiVersion"] = found.info.api_version
    return document


def decode_object(document: JsonDict) -> CustomObject:
    """A JSON document as a ``CustomObject``."""
    obj = from_dict(CustomObject, document)
    assert isinstance(obj, CustomObject)
    return obj
