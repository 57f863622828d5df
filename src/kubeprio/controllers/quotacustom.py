"""What the resource quota controller needs to count custom resources.

Upstream's quota controller discovers every served resource, custom ones included, and
counts each with the generic object count evaluator
(``staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go``: ``count/<plural>.<group>``,
1 per object, no scopes). kubeprio's components see the cluster through typed informers,
and custom objects have no type of their own, so the composition root hands the
controller a ``CustomObjectCounts`` instead (``kubeprio serve``: the API server's custom
resource registry over its store, ``apiserver.customquota``): how many objects a
``count/...`` name counts in a namespace, and a call back after one is deleted (the
replenishment upstream's monitors do).

Who uses it: ``controllers.resourcequota``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

DeletedListener = Callable[[str, str], None]
"""Called with (namespace, quota resource name) after a custom object is deleted."""


class CustomObjectCounts(Protocol):
    """Object counts of the served custom resources."""

    def count(self, namespace: str, name: str) -> int | None:
        """How many objects the quota resource ``name`` (``count/<plural>.<group>``) counts
        in ``namespace``; ``None`` when it names no served custom resource."""
        ...

    def subscribe(self, listener: DeletedListener) -> None:
        """Call ``listener`` after each custom object's deletion."""
        ...
