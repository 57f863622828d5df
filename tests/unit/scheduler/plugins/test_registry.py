"""The plugin registry (upstream ``plugins/registry.go``): every in-tree plugin is built by
name from a PluginContext."""

from __future__ import annotations

import pytest

from kubeprio.scheduler.plugins import registry
from kubeprio.scheduler.plugins.noderesources.args import NodeResourcesFitArgs
from kubeprio.scheduler.snapshot import NodeInfoList

UPSTREAM_NAMES = [
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultBinder",
]
NEEDS_VOLUME_INFORMERS = ["VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"]


@pytest.mark.parametrize("name", UPSTREAM_NAMES)
def test_every_plugin_builds_under_its_upstream_name(name, api):
    ctx = registry.PluginContext(client=api, lister=NodeInfoList([]))
    plugin = registry.new_plugin(name, ctx)
    assert plugin.name == name


def test_registry_holds_exactly_the_upstream_names():
    assert sorted(registry.REGISTRY) == sorted(UPSTREAM_NAMES + NEEDS_VOLUME_INFORMERS)


def test_args_of_the_wrong_type_are_rejected():
    ctx = registry.PluginContext(args=NodeResourcesFitArgs())
    with pytest.raises(
        registry.PluginConfigError,
        match="want args to be of type NodeAffinityArgs, got NodeResourcesFitArgs",
    ):
        registry.new_plugin("NodeAffinity", ctx)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("PodTopologySpread", "PodTopologySpread: SnapshotSharedLister is nil"),
        ("InterPodAffinity", "InterPodAffinity: SnapshotSharedLister is nil"),
        ("DefaultBinder", "DefaultBinder: a client is required"),
        ("VolumeBinding", "VolumeBinding: volume informers and a clock are required"),
        ("VolumeZone", "VolumeZone: volume informers are required"),
        (
            "NodeVolumeLimits",
            "NodeVolumeLimits: volume informers and a CSINode informer are required",
        ),
        (
            "VolumeRestrictions",
            "VolumeRestrictions: the claim informer and the cache's claim references are required",
        ),
    ],
)
def test_missing_dependencies_are_reported(name, message):
    with pytest.raises(registry.PluginConfigError, match=message):
        registry.new_plugin(name, registry.PluginContext())


def test_unknown_plugin_name():
    with pytest.raises(KeyError):
        registry.new_plugin("NoSuchPlugin", registry.PluginContext())
