"""Composing a scheduler: informers, cache, plugins from a profile, queue, preemption.

The one place that turns a ``KubeSchedulerConfiguration`` (``scheduler.profile``) into a
running ``Scheduler``. Order matters because of who needs whom: the cache and informers
come first (plugins read the cache as their snapshot lister and the informers for
namespace labels and controller selectors), then the plugins and the runtime, then the
queue, then the scheduler, and last DefaultPreemption, whose evaluator uses the
scheduler itself as its ``Handle``. The vectorised fast path is enabled only for the
default profile, the one it reproduces.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api.core import Namespace, Node
from kubeprio.api.csi import CSIDriver, CSINode
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.api.storageclass import StorageClass
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.scheduler import events as cluster_events
from kubeprio.scheduler import framework, plugin_args
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.executor import ClientExecutor
from kubeprio.scheduler.fastpreemption import FastPreemption
from kubeprio.scheduler.plugins import registry
from kubeprio.scheduler.plugins.capacitycheck import (
    CAPACITY_CLASS_INDEX,
    CapacityCheck,
    by_storage_class,
)
from kubeprio.scheduler.plugins.defaultpreemption import DefaultPreemption
from kubeprio.scheduler.plugins.queuesort import PrioritySort
from kubeprio.scheduler.plugins.schedulinggates import SchedulingGates
from kubeprio.scheduler.plugins.volumebinder import CLASS_INDEX, VolumeBinder, by_class
from kubeprio.scheduler.preemption import Evaluator, PreemptionArgs
from kubeprio.scheduler.profile import DEFAULT_PLUGINS, Profile, SchedulerConfig, parse_config
from kubeprio.scheduler.queue import SchedulingQueue
from kubeprio.scheduler.queueing_hints import queueing_hint_map
from kubeprio.scheduler.runtime import Framework
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.spreadlisters import SpreadListers

IMPLEMENTS: Final[Mapping[str, frozenset[str]]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DefaultPreemption": frozenset({"postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "DefaultBinder": frozenset({"bind"}),
}
"""Plugin name -> the extension points it implements (checked against the classes in tests)."""


VOLUME_PLUGINS: Final = frozenset(
    {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}
)
"""The plugins that read claims, volumes and classes through the volume informers."""


def default_config() -> SchedulerConfig:
    """The configuration with every upstream default."""
    return parse_config(None, IMPLEMENTS)


def load_config(data: JsonDict | None) -> SchedulerConfig:
    """Parse a ``KubeSchedulerConfiguration`` document against the plugins kubeprio has."""
    return parse_config(data, IMPLEMENTS)


def is_default_profile(profile: Profile) -> bool:
    """Whether ``profile`` is upstream's default (the fast path reproduces exactly that)."""
    reference = default_config().profiles[0]
    return (
        dict(profile.enabled) == dict(reference.enabled)
        and not profile.plugin_args
        and profile.percentage_of_nodes_to_score in (None, 0)
    )


class _Requeue:
    """Turns one informer's adds and updates into cluster events for the queue."""

    def __init__(
        self,
        resource: cluster_events.EventResource,
        requeue: Callable[[cluster_events.ClusterEvent, object, object], None],
    ) -> None:
        self._added = cluster_events.ClusterEvent(resource, cluster_events.ActionType.ADD)
        self._updated = cluster_events.ClusterEvent(resource, cluster_events.ActionType.UPDATE)
        self._requeue = requeue

    def on_add(self, obj: object) -> None:
        self._requeue(self._added, None, obj)

    def on_update(self, old: object, new: object) -> None:
        self._requeue(self._updated, old, new)

    def on_delete(self, obj: object) -> None:
        """Deletions are not registered by the volume plugins (nor CSINode's by
        NodeVolumeLimits)."""


def volume_binder_informers(
    client: Client, requeue: Callable[[cluster_events.ClusterEvent, object, object], None]
) -> tuple[VolumeBinder, list[Informer[Any]]]:
    """The claim, volume, class, CSIDriver and CSIStorageCapacity informers VolumeBinding
    reads, each turning its adds and updates into the cluster events the plugin registers
    (upstream's ``addAllEventHandlers`` for the plugins' GVKs). Tests of the plugin build
    it through here too, so they run the scheduler's wiring."""
    claims: Informer[PersistentVolumeClaim] = Informer(client, PersistentVolumeClaim)
    volumes: Informer[PersistentVolume] = Informer(client, PersistentVolume)
    volumes.add_index(CLASS_INDEX, by_class)
    classes: Informer[StorageClass] = Informer(client, StorageClass)
    drivers: Informer[CSIDriver] = Informer(client, CSIDriver)
    capacities: Informer[CSIStorageCapacity] = Informer(client, CSIStorageCapacity)
    capacities.add_index(CAPACITY_CLASS_INDEX, by_storage_class)
    informers: list[Informer[Any]] = [classes, volumes, claims, drivers, capacities]
    resources = (
        cluster_events.EventResource.STORAGE_CLASS,
        cluster_events.EventResource.PERSISTENT_VOLUME,
        cluster_events.EventResource.PERSISTENT_VOLUME_CLAIM,
        cluster_events.EventResource.CSI_DRIVER,
        cluster_events.EventResource.CSI_STORAGE_CAPACITY,
    )
    for informer, resource in zip(informers, resources, strict=True):
        informer.add_handler(_Requeue(resource, requeue))
    check = CapacityCheck(drivers, capacities)
    # A deleted capacity's compiled topology is dropped (a replaced one is recompiled
    # when first used).
    capacities.add_handler(FuncHandler(on_delete=check.forget))
    binder = VolumeBinder(client, claims=claims, volumes=volumes, classes=classes, capacity=check)
    return binder, informers


def new_scheduler(
    client: Client,
    *,
    clock: Clock,
    rng: random.Random,
    config: SchedulerConfig | None = None,
    fast_path: bool = True,
    retry_unschedulable_on_timer: bool = True,
    stopwatch: Callable[[], float] | None = None,
) -> Scheduler:
    """Build the scheduler of the first profile of ``config`` (defaults when None).

    ``stopwatch`` times scheduling attempts for the metrics (``Scheduler``'s default: the
    injected clock)."""
    config = config or default_config()
    profile = config.profiles[0]
    cache = Cache()
    namespaces: Informer[Namespace] = Informer(client, Namespace)
    spread = SpreadListers(client)

    def namespace_labels(name: str) -> Mapping[str, str] | None:
        namespace = namespaces.get(name)
        return None if namespace is None else (namespace.metadata.labels or {})

    scheduler: Scheduler | None = None

    def requeue(event: cluster_events.ClusterEvent, old: object, new: object) -> None:
        if scheduler is not None:
            scheduler.queue.move_all_to_active_or_backoff(event, old, new)

    def node_lookup(name: str) -> Node | None:
        return scheduler.nodes.get(name) if scheduler is not None else None

    binder: VolumeBinder | None = None
    volume_informers: list[Informer[Any]] = []
    if VOLUME_PLUGINS.intersection(profile.plugin_names()):
        binder, volume_informers = volume_binder_informers(client, requeue)
    csi_nodes: Informer[CSINode] | None = None
    if {"NodeVolumeLimits", "VolumeBinding"}.intersection(profile.plugin_names()):
        # NodeVolumeLimits reads each node's CSINode; a new one may lift a limit. Both
        # plugins register CSINode events (VolumeBinding for in-tree migration).
        csi_nodes = Informer(client, CSINode)
        csi_nodes.add_handler(_Requeue(cluster_events.EventResource.CSI_NODE, requeue))
        volume_informers.append(csi_nodes)
    context = registry.PluginContext(
        client=client,
        clock=clock,
        rng=rng,
        lister=cache,
        namespace_labels=namespace_labels,
        owner_selector=spread.owner_selector,
        service_selectors=spread.service_selectors,
        volume_binder=binder,
        node_lookup=node_lookup,
        claim_in_use=cache.is_pvc_used_by_pods,
        csi_node_lookup=csi_nodes.get if csi_nodes is not None else None,
    )
    instances: dict[str, framework.Plugin] = {}
    for name in profile.plugin_names():
        if name in registry.REGISTRY:
            args = plugin_args.parse_args(
                name, profile.plugin_args.get(name), f"pluginConfig[{name}].args"
            )
            instances[name] = registry.new_plugin(name, evolve(context, args=args))
    instances["PrioritySort"] = PrioritySort()
    instances["SchedulingGates"] = SchedulingGates()

    def at(point: str) -> list[framework.Plugin]:
        return [
            instances[ref.name] for ref in profile.enabled.get(point, ()) if ref.name in instances
        ]

    runtime = Framework(
        profile_name=profile.scheduler_name,
        queue_sort=PrioritySort(),
        pre_enqueue=at("preEnqueue"),  # type: ignore[arg-type]
        pre_filter=at("preFilter"),  # type: ignore[arg-type]
        filter=at("filter"),  # type: ignore[arg-type]
        pre_score=at("preScore"),  # type: ignore[arg-type]
        score=[
            (instances[ref.name], profile.weight(ref.name))  # type: ignore[misc]
            for ref in profile.enabled.get("score", ())
            if ref.name in instances
        ],
        reserve=at("reserve"),  # type: ignore[arg-type]
        permit=at("permit"),  # type: ignore[arg-type]
        pre_bind=at("preBind"),  # type: ignore[arg-type]
        bind=at("bind"),  # type: ignore[arg-type]
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
    )
    enabled_names = [name for name, _weight in DEFAULT_PLUGINS if name in profile.plugin_names()]
    scheduler = Scheduler(
        client,
        runtime,
        clock=clock,
        rng=rng,
        queue=None,
        cache=cache,
        extra_informers=(namespaces, *spread.informers, *volume_informers),
        scheduler_name=profile.scheduler_name,
        fast_path=fast_path and is_default_profile(profile),
        retry_unschedulable_on_timer=retry_unschedulable_on_timer,
        stopwatch=stopwatch,
    )
    scheduler.selected_by_service = spread.selected_by_service
    scheduler.queue = SchedulingQueue(
        clock,
        sort=PrioritySort(),
        pre_enqueue=runtime.pre_enqueue_plugins,
        queueing_hints=queueing_hint_map(enabled_names),
        pod_initial_backoff=config.pod_initial_backoff_seconds,
        pod_max_backoff=config.pod_max_backoff_seconds,
        pod_lister=scheduler.pods,
        namespace_labels=namespace_labels,
    )
    if scheduler.nominated_load is not None:
        scheduler.queue.nominator.observer = scheduler.nominated_load
    if profile.is_enabled("postFilter", "DefaultPreemption"):
        args = plugin_args.parse_args(
            "DefaultPreemption",
            profile.plugin_args.get("DefaultPreemption"),
            "pluginConfig[DefaultPreemption].args",
        )
        evaluator = Evaluator(
            scheduler,
            executor=ClientExecutor(
                client,
                clock,
                scheduler.nominated_pods_for_node,
                scheduler.recorder,
                writes=scheduler.api_writes,
            ),
            pdbs=scheduler.pdb_list,
            current_pod=scheduler.current_pod,
            clock=clock,
            rng=rng,
            args=args if isinstance(args, PreemptionArgs) else None,
            metrics=scheduler.metrics,
        )
        if scheduler.fast is not None and scheduler.nominated_load is not None:
            queue = scheduler.queue
            evaluator.indexed = FastPreemption(
                cache,
                scheduler.nominated_load,
                nominations=lambda: len(queue.nominator),
                # The default profile's plugins, unless someone swapped the framework.
                default_profile=lambda: scheduler.framework is runtime,
            )
        runtime.post_filter_plugins.append(DefaultPreemption(evaluator, scheduler.metrics))
    return scheduler
