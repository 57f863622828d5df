"""Empty lists and maps of an object's ``metadata`` are dropped before it is stored.

Upstream's ``ObjectMeta`` marks ``labels``, ``annotations``, ``ownerReferences`` and
``finalizers`` ``omitempty`` (``k8s.io/apimachinery/pkg/apis/meta/v1/types.go``), so an
object written with ``finalizers: []`` (a merge patch that empties them, or the garbage
collector cutting the last owner reference) is served without the field. kubeprio's
encoder writes an empty tuple as ``[]``; storing None instead serves what upstream serves
(``kubectl get -o custom-columns=...ownerReferences[0].kind`` prints ``<none>``, not an
index error).

Who drives it: ``apiserver.servicewrites`` on every create and update, after the strategy.
"""

from __future__ import annotations

from typing import Any

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve


def without_empty_metadata(obj: Any) -> Any:
    """``obj`` with its empty ``metadata`` lists and maps as None (the same object when
    none is empty, so the common write pays one check per field)."""
    meta: ObjectMeta | None = getattr(obj, "metadata", None)
    if meta is None:
        return obj
    changes: dict[str, None] = {}
    if meta.labels is not None and not meta.labels:
        changes["labels"] = None
    if meta.annotations is not None and not meta.annotations:
        changes["annotations"] = None
    if meta.owner_references is not None and not meta.owner_references:
        changes["owner_references"] = None
    if meta.finalizers is not None and not meta.finalizers:
        changes["finalizers"] = None
    if not changes:
        return obj
    return evolve(obj, metadata=evolve(meta, **changes))
