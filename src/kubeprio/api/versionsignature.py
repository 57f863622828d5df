"""Whether a set of stored objects changed since it was last seen.

What it is: the names and resourceVersions of a listed set, in list order, as one
comparable value. A component that derives an index from a few configuration objects
(admission webhooks, custom resource routes) lists them on each use and rebuilds its
index only when the signature differs: every write bumps an object's resourceVersion,
and a create or delete changes the names.

Who drives it: ``admission.webhookdispatch`` and ``apiserver.customresources``. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

VersionSignature = tuple[tuple[str, str], ...]


def version_signature(objects: Iterable[Any]) -> VersionSignature:
    """``((name, resourceVersion), ...)`` of ``objects`` in their order."""
    return tuple((obj.metadata.name or "", obj.metadata.resource_version or "") for obj in objects)
