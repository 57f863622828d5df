"""Upstream plugin names, one constant each (``pkg/scheduler/framework/plugins/names/names.go``).

A plugin's name is what users write in a ``KubeSchedulerConfiguration`` profile, what a
``Status`` is stamped with, what the queue keys its queueing hints by and what appears in
``FailedScheduling`` diagnostics, so it must be spelled exactly as upstream spells it.
Constants only: no imports, no state.
"""

from __future__ import annotations

from typing import Final

PRIORITY_SORT: Final = "PrioritySort"
DEFAULT_BINDER: Final = "DefaultBinder"
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
DYNAMIC_RESOURCES: Final = "DynamicResources"
IMAGE_LOCALITY: Final = "ImageLocality"
INTER_POD_AFFINITY: Final = "InterPodAffinity"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_NAME: Final = "NodeName"
NODE_PORTS: Final = "NodePorts"
NODE_RESOURCES_BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"
AZURE_DISK_LIMITS: Final = "AzureDiskLimits"
CINDER_LIMITS: Final = "CinderLimits"
EBS_LIMITS: Final = "EBSLimits"
GCE_PD_LIMITS: Final = "GCEPDLimits"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
SCHEDULING_GATES: Final = "SchedulingGates"
SELECTOR_SPREAD: Final = "SelectorSpread"
TAINT_TOLERATION: Final = "TaintToleration"
VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
VOLUME_ZONE: Final = "VolumeZone"

ALL: Final = (
    PRIORITY_SORT,
    DEFAULT_BINDER,
    DEFAULT_PREEMPTION,
    DYNAMIC_RESOURCES,
    IMAGE_LOCALITY,
    INTER_POD_AFFINITY,
    NODE_AFFINITY,
    NODE_NAME,
    NODE_PORTS,
    NODE_RESOURCES_BALANCED_ALLOCATION,
    NODE_RESOURCES_FIT,
    NODE_UNSCHEDULABLE,
    NODE_VOLUME_LIMITS,
    AZURE_DISK_LIMITS,
    CINDER_LIMITS,
    EBS_LIMITS,
    GCE_PD_LIMITS,
    POD_TOPOLOGY_SPREAD,
    SCHEDULING_GATES,
    SELECTOR_SPREAD,
    TAINT_TOLERATION,
    VOLUME_BINDING,
    VOLUME_RESTRICTIONS,
    VOLUME_ZONE,
)
"""Every upstream plugin name, in ``names.go`` order."""
