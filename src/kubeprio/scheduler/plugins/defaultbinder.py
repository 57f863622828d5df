"""DefaultBinder: bind through the ``pods/binding`` subresource (upstream ``plugins/defaultbinder``).

Bind posts a ``Binding`` (the pod's namespace, name and uid; target the Node) through
the ``Client``. An API failure becomes an Error status carrying the server's message
(upstream ``fwk.AsStatus(err)``); the scheduler then unreserves and requeues the pod.
Run by ``scheduler.runtime``; the only plugin that writes to the API.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.core import Binding, ObjectReference
from kubeprio.api.errors import StatusError
from kubeprio.api.meta import ObjectMeta
from kubeprio.client.protocol import Client
from kubeprio.scheduler import framework

NAME: Final = "DefaultBinder"


class DefaultBinder:
    """Binds pods with ``client.bind``."""

    name: Final = NAME

    def __init__(self, client: Client) -> None:
        self._client = client

    def bind(
        self, state: framework.CycleState, pod: framework.PodInfo, node_name: str
    ) -> framework.Status | None:
        """Upstream ``DefaultBinder.Bind``."""
        metadata = pod.pod.metadata
        binding = Binding(
            metadata=ObjectMeta(namespace=metadata.namespace, name=metadata.name, uid=metadata.uid),
            target=ObjectReference(kind="Node", name=node_name),
        )
        try:
            self._client.bind(binding)
        except StatusError as exc:
            return framework.error(exc.message or str(exc))
        return None
