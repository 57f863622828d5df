"""Writing an object's status computed from its latest copy, retrying on conflict.

This is what client-go code does with ``retry.RetryOnConflict`` around a get, a change
and ``UpdateStatus``. Upstream's scheduler sends the same change as a two-way strategic
merge patch of the status (``util.PatchPodStatus``), which the API server applies to
its latest copy; recomputing the change on the latest copy after a conflict gives the
same outcome. The first attempt uses the caller's copy (an informer's, normally
current), so a write costs a single request unless somebody wrote in between.

Driven by the scheduler (pod conditions and nominations, victims' ``DisruptionTarget``)
and the kubelet (pod status as containers start and stop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from kubeprio.api import errors
from kubeprio.api.meta import ApiObject
from kubeprio.client.protocol import Client

# client-go's retry.DefaultRetry makes five attempts.
MAX_ATTEMPTS: Final = 5

T = TypeVar("T", bound=ApiObject)


def write_status(
    client: Client, obj: T, change: Callable[[T], T | None], *, read_first: bool = False
) -> T | None:
    """Write ``change(latest)`` with ``update_status``; return what the server stored.

    ``change`` returns the object with its new status, or None when there is nothing to
    write (then the latest copy is returned). The result is None when the object is
    gone or was replaced by another of the same name (another uid). ``read_first``
    reads the object before the first attempt instead of trying ``obj`` itself.
    Conflicts on every attempt raise the last ``ConflictError``.
    """
    kind = type(obj)
    name, namespace, uid = obj.metadata.name or "", obj.metadata.namespace, obj.metadata.uid
    current = obj
    conflict: errors.ConflictError | None = None
    for attempt in range(MAX_ATTEMPTS):
        if attempt or read_first:
            try:
                current = client.get(kind, name, namespace)
            except errors.NotFoundError:
                return None
            if current.metadata.uid != uid:
                return None
        new = change(current)
        if new is None:
            return current
        try:
            return client.update_status(new)
        except errors.ConflictError as exc:
            conflict = exc
        except errors.NotFoundError:
            return None
    assert conflict is not None
    raise conflict
