"""The in-tree plugin registry: plugin name -> factory (upstream ``plugins/registry.go``).

The only place a plugin is added. A factory takes a :class:`PluginContext` -- what the
profile and the composition root give plugins: the API client, clock and random
generator, the snapshot lister, lookups for namespace labels and controller selectors,
and the plugin's arguments (its ``*Args`` dataclass, or None for the defaults) -- and
returns the plugin. ``scheduler.profile`` builds each profile's plugins from here.
Must not import the scheduler's cycle, queue or cache.
"""

from __future__ import annotations

import dataclasses
import random
import types
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from kubeprio.api.core import Node
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.errors import KubeprioError
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins import (
    defaultbinder,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from kubeprio.scheduler.plugins.noderesources import args as noderesources_args
from kubeprio.scheduler.plugins.noderesources import balanced_allocation, fit
from kubeprio.scheduler.plugins.volumebinder import VolumeBinder
from kubeprio.scheduler.snapshot import SharedLister

T = TypeVar("T")


def _no_namespace(name: str) -> Mapping[str, str] | None:
    return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class PluginContext:
    """What a plugin factory may use (a trimmed upstream ``framework.Handle`` plus args)."""

    client: Client | None = None
    clock: Clock | None = None
    rng: random.Random | None = None
    lister: SharedLister | None = None
    """The node infos of the cycle's snapshot (PodTopologySpread, InterPodAffinity)."""
    namespace_labels: interpodaffinity.NamespaceLabels = _no_namespace
    """Namespace name -> labels, None if it does not exist (namespaceSelector terms)."""
    owner_selector: podtopologyspread.OwnerSelectorLookup | None = None
    """A pod controller's selector (PodTopologySpread's default constraints)."""
    service_selectors: podtopologyspread.ServiceSelectorsLookup | None = None
    """The selectors of the Services selecting a pod (PodTopologySpread's default constraints)."""
    args: object | None = None
    """The plugin's arguments dataclass; None means upstream's defaults."""
    volume_binder: VolumeBinder | None = None
    """Claims, volumes and classes through their informers (VolumeBinding)."""
    node_lookup: Callable[[str], Node | None] | None = None
    """Node name -> the informer's Node (VolumeBinding's PreBind checks)."""
    claim_in_use: volumerestrictions.ClaimInUse | None = None
    """``namespace/claim`` -> whether a scheduled pod names it (VolumeRestrictions)."""
    csi_node_lookup: nodevolumelimits.CSINodeLookup | None = None
    """Node name -> its CSINode in the scheduler's informer (NodeVolumeLimits)."""


class PluginConfigError(KubeprioError, ValueError):
    """A plugin cannot be built from this context (wrong args type, missing dependency)."""


def _args(ctx: PluginContext, kind: type[T]) -> T | None:
    if ctx.args is None or isinstance(ctx.args, kind):
        return ctx.args
    raise PluginConfigError(
        f"want args to be of type {kind.__name__}, got {type(ctx.args).__name__}"
    )


def _lister(ctx: PluginContext, name: str) -> SharedLister:
    if ctx.lister is None:
        raise PluginConfigError(f"{name}: SnapshotSharedLister is nil")
    return ctx.lister


def _client(ctx: PluginContext, name: str) -> Client:
    if ctx.client is None:
        raise PluginConfigError(f"{name}: a client is required")
    return ctx.client


def _node_resources_fit(ctx: PluginContext) -> framework.Plugin:
    return fit.Fit(_args(ctx, noderesources_args.NodeResourcesFitArgs))


def _balanced_allocation(ctx: PluginContext) -> framework.Plugin:
    return balanced_allocation.BalancedAllocation(
        _args(ctx, noderesources_args.NodeResourcesBalancedAllocationArgs)
    )


def _node_affinity(ctx: PluginContext) -> framework.Plugin:
    return nodeaffinity.NodeAffinity(_args(ctx, nodeaffinity.NodeAffinityArgs))


def _pod_topology_spread(ctx: PluginContext) -> framework.Plugin:
    return podtopologyspread.PodTopologySpread(
        _lister(ctx, podtopologyspread.NAME),
        _args(ctx, podtopologyspread.PodTopologySpreadArgs),
        owner_selector=ctx.owner_selector,
        service_selectors=ctx.service_selectors,
    )


def _inter_pod_affinity(ctx: PluginContext) -> framework.Plugin:
    return interpodaffinity.InterPodAffinity(
        _lister(ctx, interpodaffinity.NAME),
        ctx.namespace_labels,
        _args(ctx, interpodaffinity.InterPodAffinityArgs),
    )


def _volume_binding(ctx: PluginContext) -> framework.Plugin:
    if ctx.volume_binder is None or ctx.clock is None or ctx.node_lookup is None:
        raise PluginConfigError(f"{volumebinding.NAME}: volume informers and a clock are required")
    args = _args(ctx, volumebinding.VolumeBindingArgs) or volumebinding.VolumeBindingArgs()
    return volumebinding.VolumeBinding(
        ctx.volume_binder,
        clock=ctx.clock,
        node_lookup=ctx.node_lookup,
        bind_timeout=args.bind_timeout_seconds,
    )


def _volume_restrictions(ctx: PluginContext) -> framework.Plugin:
    if ctx.volume_binder is None or ctx.claim_in_use is None:
        raise PluginConfigError(
            f"{volumerestrictions.NAME}: the claim informer and the cache's claim references "
            "are required"
        )
    return volumerestrictions.VolumeRestrictions(ctx.volume_binder.claims.get_api, ctx.claim_in_use)


def _node_volume_limits(ctx: PluginContext) -> framework.Plugin:
    binder = ctx.volume_binder
    if binder is None or ctx.csi_node_lookup is None:
        raise PluginConfigError(
            f"{nodevolumelimits.NAME}: volume informers and a CSINode informer are required"
        )
    return nodevolumelimits.NodeVolumeLimits(
        binder.claims.get_api, binder.volumes.get_api, binder.classes.get, ctx.csi_node_lookup
    )


def _volume_zone(ctx: PluginContext) -> framework.Plugin:
    binder = ctx.volume_binder
    if binder is None:
        raise PluginConfigError(f"{volumezone.NAME}: volume informers are required")
    return volumezone.VolumeZone(binder.claims.get_api, binder.volumes.get_api, binder.classes.get)


def _default_binder(ctx: PluginContext) -> framework.Plugin:
    return defaultbinder.DefaultBinder(_client(ctx, defaultbinder.NAME))


Factory = Callable[[PluginContext], framework.Plugin]

REGISTRY: Final[Mapping[str, Factory]] = types.MappingProxyType(
    {
        nodeunschedulable.NAME: lambda ctx: nodeunschedulable.NodeUnschedulable(),
        nodename.NAME: lambda ctx: nodename.NodeName(),
        tainttoleration.NAME: lambda ctx: tainttoleration.TaintToleration(),
        nodeaffinity.NAME: _node_affinity,
        nodeports.NAME: lambda ctx: nodeports.NodePorts(),
        fit.NAME: _node_resources_fit,
        volumerestrictions.NAME: _volume_restrictions,
        nodevolumelimits.NAME: _node_volume_limits,
        volumebinding.NAME: _volume_binding,
        volumezone.NAME: _volume_zone,
        balanced_allocation.NAME: _balanced_allocation,
        podtopologyspread.NAME: _pod_topology_spread,
        interpodaffinity.NAME: _inter_pod_affinity,
        defaultbinder.NAME: _default_binder,
    }
)
"""Every in-tree plugin by upstream name."""


def new_plugin(name: str, ctx: PluginContext) -> framework.Plugin:
    """Build plugin ``name``; raises ``KeyError`` for an unknown name."""
    return REGISTRY[name](ctx)
