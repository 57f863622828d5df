"""Registering a kubelet's Node with the API server.

Mirrors ``pkg/kubelet/kubelet_node_status.go`` (``registerWithAPIServer``,
``tryRegisterWithAPIServer``); the Node object itself is ``kubelet.node.node_object``
(``initialNode`` plus the status setters):

* ``register_node``: create the Node a kubelet would register, or return an existing one
  unchanged (an already registered node keeps its declared capacity). ``kubeprio serve``
  registers its nodes this way before their kubelets start.
* ``ensure_node``: what a kubelet does when it starts: find its Node, or register it
  (when its config allows) with the configured capacity; an existing Node gets the
  kubelet's ``controller-managed-attach-detach`` annotation and default labels if it
  lacks them (``reconcileCMADAnnotationWithExistingNode``, ``updateDefaultLabels``) and,
  if it reports no Ready condition, the kubelet's conditions
  (``kubelet.node.with_ready_conditions``, the first ``tryUpdateNodeStatus``). Each is
  a strategic merge PATCH of ``nodes/status`` from the Node read to the Node wanted
  (``client.nodestatuspatch``), never a PUT: a concurrent writer of other fields does
  not make the kubelet's write conflict.

Driven by ``kubelet.kubelet`` (``Kubelet.start``) and the composition roots. Writes through
the ``Client`` it is handed; time comes from the caller. Must not import ``apiserver``,
``store`` or ``admission``.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeprio.api import errors
from kubeprio.api.core import Node
from kubeprio.client.nodestatuspatch import patch_node_status
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.kubelet import node


def register_node(
    client: Client,
    name: str,
    *,
    clock: Clock,
    capacity: Mapping[str, str],
    allocatable: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    pod_cidr: str | None = None,
    internal_ip: str | None = None,
) -> Node:
    """Create the Node a kubelet would register (``registerWithAPIServer``), or return
    the existing one unchanged (an already registered node keeps its declared capacity)."""
    try:
        return client.get(Node, name)
    except errors.NotFoundError:
        pass
    return client.create(
        node.node_object(
            name,
            capacity=capacity,
            allocatable=allocatable,
            labels=labels,
            pod_cidr=pod_cidr,
            internal_ip=internal_ip,
            now=rfc3339(clock.now()),
        )
    )


def ensure_node(
    client: Client, name: str, *, now: str, register: bool, capacity: Mapping[str, str]
) -> Node:
    """A starting kubelet's Node: found (reporting Ready if it reports nothing), or
    registered with ``capacity`` when ``register`` allows (NotFound otherwise)."""
    try:
        current = client.get(Node, name)
    except errors.NotFoundError:
        if not register:
            raise
        return client.create(node.node_object(name, capacity=capacity, now=now))
    reconciled = node.reconciled_with_existing(current)
    if reconciled is not None:
        current = patch_node_status(client, current, reconciled)
    ready = node.with_ready_conditions(current, now=now)
    return current if ready is None else patch_node_status(client, current, ready)
