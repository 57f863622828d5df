"""``SchedulerHandle``: the state every part of the ``Scheduler`` shares, and the framework
``Handle`` its plugins see.

What it is: the base of ``Scheduler`` (``scheduler.scheduler``), which sets the state
declared here in its constructor. The ``Handle`` methods (upstream ``framework.Handle``,
``scheduler.framework.Handle``) give plugins, DefaultPreemption above all, the snapshot's
nodes, the nominated pods, the filters with nominated pods, the PreFilter extensions, the
PodDisruptionBudgets and the informer's latest version of a pod.

Who drives it: the plugins through the ``Handle`` protocol; the scheduling cycle
(``scheduler.schedulingcycle``), the binding cycle (``scheduler.bindingcycle``) and the
failure handling (``scheduler.schedulingfailure``) read the shared state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from kubeprio.api.core import Node, Pod
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.client.record import EventRecorder
from kubeprio.clock import Clock
from kubeprio.scheduler import queue as scheduling_queue
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.fastpath import FastPath
from kubeprio.scheduler.framework import CycleState, PodInfo, Status
from kubeprio.scheduler.metrics import SchedulerMetrics
from kubeprio.scheduler.nominatedload import NominatedLoad
from kubeprio.scheduler.runtime import Framework
from kubeprio.scheduler.snapshot import NodeInfo


class SchedulerHandle:
    """The scheduler's shared state (set by ``Scheduler.__init__``) and its ``Handle``."""

    client: Client
    framework: Framework
    clock: Clock
    rng: random.Random
    queue: scheduling_queue.SchedulingQueue
    scheduler_name: str
    cache: Cache
    recorder: EventRecorder
    api_writes: AnsweredRetry
    """Writes that wait on admission webhook answers (``client.answeredretry``)."""
    fast: FastPath | None
    nominated_load: NominatedLoad | None
    nodes: Informer[Node]
    pods: Informer[Pod]
    pdbs: Informer[PodDisruptionBudget]
    extra_informers: list[Informer[Any]]
    preemptions: int
    metrics: SchedulerMetrics
    stopwatch: Callable[[], float]
    _attempt_start: float
    """When the current attempt started (``stopwatch``), for its duration metric."""

    # --- Handle -----------------------------------------------------------------------------------

    def node_infos(self) -> Sequence[NodeInfo]:
        """The snapshot's nodes in order."""
        return self.cache.node_infos()

    def node_info(self, name: str) -> NodeInfo | None:
        """One node of the snapshot."""
        info = self.cache.node_info(name)
        return info if info is not None and info.node is not None else None

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to ``node_name``."""
        return self.queue.nominator.nominated_pods_for_node(node_name)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        """The profile's filters with nominated pods."""
        return self.framework.run_filter_plugins_with_nominated_pods(state, pod, node)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: add."""
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: remove."""
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node)

    def pdb_list(self) -> list[PodDisruptionBudget]:
        """All PodDisruptionBudgets (listed once per preemption)."""
        return self.pdbs.list()

    def current_pod(self, pod: Pod) -> Pod | None:
        """The informer's latest version of ``pod``."""
        return self.pods.get(pod.metadata.name or "", pod.metadata.namespace)
