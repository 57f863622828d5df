"""The core/v1 kinds kubeprio models: Pod, Node, Namespace, Event, Binding.

Fields that matter to scheduling, admission, the kubelet and the controllers are
attributes (snake_case); every other key of the JSON object is kept verbatim in the
``extra`` of the nearest modelled level, so ``kubectl get -o yaml`` output round-trips.
Mirrors ``k8s.io/api/core/v1/types.go``. Pure data: no I/O.

Pod phases (``status.phase``)::

    Pending --bind+start--> Running --duration--> Succeeded
       |                       |
       +--------- Failed <-----+   (admission rejected, evicted, deleted)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init, json_name
from kubeprio.api.quantity import Quantity

ResourceList = Mapping[str, Quantity]
"""``v1.ResourceList``: resource name -> quantity."""

# Pod phases.
PHASE_PENDING: Final = "Pending"
PHASE_RUNNING: Final = "Running"
PHASE_SUCCEEDED: Final = "Succeeded"
PHASE_FAILED: Final = "Failed"
TERMINAL_PHASES: Final = frozenset({PHASE_SUCCEEDED, PHASE_FAILED})

PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
PREEMPT_NEVER: Final = "Never"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: Final = 30


# --- containers -------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRequirements:
    """Container ``resources``: requests and limits."""

    limits: ResourceList | None = None
    requests: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerPort:
    """A container port; ``host_port`` makes it a NodePorts scheduling constraint."""

    name: str | None = None
    host_port: Int32 | None = None
    container_port: Int32 | None = None
    protocol: str | None = None
    host_ip: str | None = json_name("hostIP")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    """A container; only name, image, ports, resources and restartPolicy are modelled."""

    name: str | None = None
    image: str | None = None
    ports: tuple[ContainerPort, ...] | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EphemeralContainer:
    """``v1.EphemeralContainer``: a debugging container added to a running pod through the
    ``pods/ephemeralcontainers`` subresource (``kubectl debug``). Its common fields are a
    Container's (``EphemeralContainerCommon``); ``target_container_name`` names the
    container whose namespaces it joins."""

    name: str | None = None
    image: str | None = None
    ports: tuple[ContainerPort, ...] | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    target_container_name: str | None = None
    extra: JsonDict = extra_field()

    def as_container(self) -> Container:
        """The common fields as a ``Container`` (upstream's cast of
        ``EphemeralContainerCommon`` to ``Container``), for the shared container rules."""
        return Container(
            name=self.name,
            image=self.image,
            ports=self.ports,
            resources=self.resources,
            restart_policy=self.restart_policy,
            extra=self.extra,
        )

    @classmethod
    def from_container(cls, container: Container, target: str | None) -> EphemeralContainer:
        """The inverse of ``as_container``, with ``targetContainerName``."""
        return cls(
            name=container.name,
            image=container.image,
            ports=container.ports,
            resources=container.resources,
            restart_policy=container.restart_policy,
            target_container_name=target,
            extra=container.extra,
        )


# --- affinity ---------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorRequirement:
    """``key`` ``operator`` (In, NotIn, Exists, DoesNotExist, Gt, Lt) ``values``."""

    key: str | None = None
    operator: str | None = None
    values: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorTerm:
    """Requirements ANDed together: label expressions and field expressions."""

    match_expressions: tuple[NodeSelectorRequirement, ...] | None = None
    match_fields: tuple[NodeSelectorRequirement, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelector:
    """Terms ORed together (required node affinity)."""

    node_selector_terms: tuple[NodeSelectorTerm, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PreferredSchedulingTerm:
    """A weighted preferred node-affinity term."""

    weight: Int32 | None = None
    preference: NodeSelectorTerm | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAffinity:
    """Required and preferred node affinity."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: (
        tuple[PreferredSchedulingTerm, ...] | None
    ) = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinityTerm:
    """Pods matching ``label_selector`` in ``namespaces`` within ``topology_key``."""

    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] | None = None
    topology_key: str | None = None
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] | None = None
    mismatch_label_keys: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedPodAffinityTerm:
    """A weighted preferred pod (anti-)affinity term."""

    weight: Int32 | None = None
    pod_affinity_term: PodAffinityTerm | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinity:
    """Inter-pod affinity (also used for anti-affinity, which has the same shape)."""

    required_during_scheduling_ignored_during_execution: tuple[PodAffinityTerm, ...] | None = None
    preferred_during_scheduling_ignored_during_execution: (
        tuple[WeightedPodAffinityTerm, ...] | None
    ) = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Affinity:
    """``spec.affinity``."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Toleration:
    """A toleration of node taints."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySpreadConstraint:
    """A pod topology spread constraint."""

    max_skew: Int32 | None = None
    topology_key: str | None = None
    when_unsatisfiable: str | None = None
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


# --- pod ----------------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodSpec:
    """``spec`` of a Pod (and of pod templates)."""

    init_containers: tuple[Container, ...] | None = None
    containers: tuple[Container, ...] | None = None
    ephemeral_containers: tuple[EphemeralContainer, ...] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    node_selector: Mapping[str, str] | None = None
    service_account_name: str | None = None
    node_name: str | None = None
    host_network: bool | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: tuple[Toleration, ...] | None = None
    priority_class_name: str | None = None
    priority: Int32 | None = None
    preemption_policy: str | None = None
    overhead: ResourceList | None = None
    runtime_class_name: str | None = None
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodCondition:
    """A pod condition (PodScheduled, Ready, DisruptionTarget, ...)."""

    type: str | None = None
    status: str | None = None
    observed_generation: int | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerStatus:
    """Per-container status; only what the READY/RESTARTS columns need is modelled."""

    name: str | None = None
    ready: bool | None = None
    restart_count: Int32 | None = None
    started: bool | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodStatus:
    """``status`` of a Pod."""

    phase: str | None = None
    conditions: tuple[PodCondition, ...] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = json_name("hostIP")
    pod_ip: str | None = json_name("podIP")
    start_time: str | None = None
    container_statuses: tuple[ContainerStatus, ...] | None = None
    qos_class: str | None = None
    ephemeral_container_statuses: tuple[ContainerStatus, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Pod:
    """A v1 Pod."""

    api_version: str | None = "v1"
    kind: str | None = "Pod"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec | None = None
    status: PodStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodTemplateSpec:
    """The pod template of a workload (Deployment, ReplicaSet, Job)."""

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None
    extra: JsonDict = extra_field()


# --- node -----------------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    """A node taint."""

    key: str | None = None
    value: str | None = None
    effect: str | None = None
    time_added: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSpec:
    """``spec`` of a Node."""

    pod_cidr: str | None = json_name("podCIDR")
    provider_id: str | None = json_name("providerID")
    unschedulable: bool | None = None
    taints: tuple[Taint, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeCondition:
    """A node condition (Ready, MemoryPressure, ...)."""

    type: str | None = None
    status: str | None = None
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAddress:
    """A node address (InternalIP, Hostname, ...)."""

    type: str | None = None
    address: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSystemInfo:
    """The parts of ``status.nodeInfo`` that ``kubectl get nodes -o wide`` shows."""

    kernel_version: str | None = None
    os_image: str | None = json_name("osImage")
    container_runtime_version: str | None = None
    kubelet_version: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeStatus:
    """``status`` of a Node: capacity, allocatable, conditions, addresses."""

    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    conditions: tuple[NodeCondition, ...] | None = None
    addresses: tuple[NodeAddress, ...] | None = None
    node_info: NodeSystemInfo | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """A v1 Node."""

    api_version: str | None = "v1"
    kind: str | None = "Node"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec | None = None
    status: NodeStatus | None = None
    extra: JsonDict = extra_field()


# --- namespace, events, binding ---------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NamespaceStatus:
    """``status`` of a Namespace."""

    phase: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Namespace:
    """A v1 Namespace."""

    api_version: str | None = "v1"
    kind: str | None = "Namespace"
    metadata: ObjectMeta = ObjectMeta()
    spec: JsonDict | None = None
    status: NamespaceStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectReference:
    """A reference to another object (event subject, binding target)."""

    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EventSource:
    """Which component reported an event (``kubectl describe``'s "From" column)."""

    component: str | None = None
    host: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EventSeries:
    """A run of repeats of one event (the events.k8s.io recorder's way of counting):
    how many were seen and when the last one was."""

    count: Int32 | None = None
    last_observed_time: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """A core/v1 Event (also served as events.k8s.io/v1 Event, ``api.eventsv1``)."""

    api_version: str | None = "v1"
    kind: str | None = "Event"
    metadata: ObjectMeta = ObjectMeta()
    involved_object: ObjectReference | None = None
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    count: Int32 | None = None
    type: str | None = None
    event_time: str | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """A v1 Binding: the scheduler's request to put a pod on ``target`` (a Node)."""

    api_version: str | None = "v1"
    kind: str | None = "Binding"
    metadata: ObjectMeta = ObjectMeta()
    target: ObjectReference | None = None
    extra: JsonDict = extra_field()


MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"
"""Marks the API server's mirror of a kubelet's static pod (upstream ``ConfigMirrorAnnotationKey``)."""


def is_mirror_pod(pod: Pod) -> bool:
    """``kubetypes.IsMirrorPod``: the annotation is present, whatever its value."""
    return pod.metadata.annotation(MIRROR_POD_ANNOTATION) is not None
