"""The ReplicationController manager: the ReplicaSet controller, for ReplicationControllers.

Mirrors ``pkg/controller/replication/replication_controller.go``: upstream builds the
ReplicaSet controller (``replicaset.NewBaseController``) over adapters that convert each
ReplicationController to a ReplicaSet and back, with the kind
``v1/ReplicationController`` for owner references and the event source
``replication-controller``. Here the shared controller is ``controllers.replicaset``'s
:class:`~kubeprio.controllers.replicaset.ReplicaManager`, and this subclass supplies what
differs: the owner kind, the selector (the label map as ``matchLabels``, as the adapter's
conversion writes it) and the empty status. Everything else — claiming pods, slow-start
creation, the deletion ranking, expectations, ``ReplicaFailure``, the status counts, the
events — is the ReplicaSet's, so a preempted RC pod is replaced and goes back through the
scheduler's queue exactly like a ReplicaSet's.

Driven through ``controllers.base``; sees pods and ReplicationControllers through informers.
"""

from __future__ import annotations

import random

from kubeprio.api.core import Pod
from kubeprio.api.meta import LabelSelector
from kubeprio.api.replicationcontroller import (
    KIND,
    ReplicationController,
    ReplicationControllerStatus,
    label_selector_of,
)
from kubeprio.client import record
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers import podutil
from kubeprio.controllers.replicaset import ReplicaManager


class ReplicationManager(ReplicaManager[ReplicationController]):
    """``ReplicationManager``."""

    name = "replication-controller"
    owner_kind = KIND

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        controllers: Informer[ReplicationController],
        recorder: record.EventRecorder | None = None,
        burst_replicas: int = podutil.MAX_POD_CREATE_DELETE_PER_SYNC,
    ) -> None:
        super().__init__(
            client,
            clock=clock,
            rng=rng,
            pods=pods,
            owners=controllers,
            recorder=recorder,
            burst_replicas=burst_replicas,
        )

    @staticmethod
    def selector_of(owner: ReplicationController) -> LabelSelector | None:
        """``spec.selector`` as ``matchLabels`` (the adapter's conversion)."""
        return label_selector_of(owner)

    @staticmethod
    def empty_status() -> ReplicationControllerStatus:
        """An empty ``ReplicationControllerStatus``."""
        return ReplicationControllerStatus()
