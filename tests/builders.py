"""Fluent builders for test objects (as upstream's ``pkg/scheduler/testing/wrappers.go``).

pod("a").priority(1000).requests(cpu="500m").on("n1").build()
node("n1").allocatable(cpu="4", memory="8Gi").taint("k", "v", "NoSchedule").build()
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.api.core import (
    Affinity,
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.scheduling import PriorityClass


def _resources(values: dict[str, str]) -> dict[str, Any]:
    return {name.replace("_", "-"): parse_quantity(value) for name, value in values.items()}


def _quantities(values: dict[str, str]) -> dict[str, Any]:
    return {name: parse_quantity(value) for name, value in values.items()}


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._meta = ObjectMeta(name=name, namespace=namespace)
        self._spec = PodSpec(containers=(Container(name="c", image="busybox"),))
        self._status: PodStatus | None = None

    def _container(self, **changes: Any) -> None:
        first = dataclasses.replace(self._spec.containers[0], **changes)  # type: ignore[index]
        self._spec = dataclasses.replace(self._spec, containers=(first, *self._spec.containers[1:]))  # type: ignore[index]

    def requests(self, **values: str) -> PodBuilder:
        current = self._spec.containers[0].resources or ResourceRequirements()  # type: ignore[index]
        self._container(resources=dataclasses.replace(current, requests=_resources(values)))
        return self

    def limits(self, **values: str) -> PodBuilder:
        current = self._spec.containers[0].resources or ResourceRequirements()  # type: ignore[index]
        self._container(resources=dataclasses.replace(current, limits=_resources(values)))
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, priority=value)
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, priority_class_name=name)
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, preemption_policy=policy)
        return self

    def on(self, node_name: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, node_name=node_name)
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, labels=labels)
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._meta = dataclasses.replace(
            self._meta, labels={**(self._meta.labels or {}), key: value}
        )
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, uid=uid)
        return self

    def terminating(self, at: str = "2026-01-01T00:00:00Z") -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, deletion_timestamp=at)
        return self

    def owner(self, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
        ref = OwnerReference(api_version=api_version, kind=kind, name=name, controller=True)
        self._meta = dataclasses.replace(self._meta, owner_references=(ref,))
        return self

    # --- containers (upstream wrappers' Req/InitReq/Overhead/ContainerPort) ---------------

    def no_containers(self) -> PodBuilder:
        """No containers at all (upstream ``st.MakePod().Obj()``)."""
        self._spec = dataclasses.replace(self._spec, containers=())
        return self

    def container(self, requests: dict[str, str] | None = None) -> PodBuilder:
        """Append a container requesting ``requests`` (resource name -> quantity)."""
        containers = tuple(self._spec.containers or ())
        resources = (
            ResourceRequirements(requests=_quantities(requests)) if requests is not None else None
        )
        added = Container(name=f"c{len(containers)}", image="busybox", resources=resources)
        self._spec = dataclasses.replace(self._spec, containers=(*containers, added))
        return self

    def init_container(
        self, requests: dict[str, str], *, sidecar: bool = False, host_port: int | None = None
    ) -> PodBuilder:
        """Append an init container (``sidecar``: ``restartPolicy: Always``)."""
        containers = tuple(self._spec.init_containers or ())
        ports = (
            (ContainerPort(container_port=host_port, host_port=host_port, protocol="TCP"),)
            if host_port
            else None
        )
        added = Container(
            name=f"init{len(containers)}",
            image="busybox",
            resources=ResourceRequirements(requests=_quantities(requests)),
            restart_policy="Always" if sidecar else None,
            ports=ports,
        )
        self._spec = dataclasses.replace(self._spec, init_containers=(*containers, added))
        return self

    def overhead(self, values: dict[str, str]) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, overhead=_quantities(values))
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str | None = None) -> PodBuilder:
        """Add a host port to the first container (upstream ``newPod("m1", "TCP/ip/port")``)."""
        first = self._spec.containers[0]  # type: ignore[index]
        added = ContainerPort(
            container_port=port, host_port=port, protocol=protocol, host_ip=host_ip
        )
        self._container(ports=(*(first.ports or ()), added))
        return self

    # --- scheduling constraints -------------------------------------------------------

    def toleration(
        self,
        key: str | None = None,
        operator: str | None = None,
        value: str | None = None,
        effect: str | None = None,
    ) -> PodBuilder:
        added = Toleration(key=key, operator=operator, value=value, effect=effect)
        self._spec = dataclasses.replace(
            self._spec, tolerations=(*(self._spec.tolerations or ()), added)
        )
        return self

    def node_selector(self, labels: dict[str, str]) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, node_selector=labels)
        return self

    def _affinity(self, **changes: Any) -> None:
        current = self._spec.affinity or Affinity()
        self._spec = dataclasses.replace(
            self._spec, affinity=dataclasses.replace(current, **changes)
        )

    def _node_affinity(self) -> NodeAffinity:
        affinity = self._spec.affinity
        return (affinity.node_affinity if affinity else None) or NodeAffinity()

    def required_node_affinity(self, *terms: NodeSelectorTerm) -> PodBuilder:
        """Required node affinity with these ORed terms."""
        node_affinity = dataclasses.replace(
            self._node_affinity(),
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=terms
            ),
        )
        self._affinity(node_affinity=node_affinity)
        return self

    def preferred_node_affinity(self, weight: int, term: NodeSelectorTerm) -> PodBuilder:
        current = self._node_affinity()
        preferred = (
            *(current.preferred_during_scheduling_ignored_during_execution or ()),
            PreferredSchedulingTerm(weight=weight, preference=term),
        )
        self._affinity(
            node_affinity=dataclasses.replace(
                current, preferred_during_scheduling_ignored_during_execution=preferred
            )
        )
        return self

    def _pod_affinity(
        self,
        anti: bool,
        required: PodAffinityTerm | None,
        preferred: WeightedPodAffinityTerm | None,
    ) -> PodBuilder:
        affinity = self._spec.affinity or Affinity()
        current = (affinity.pod_anti_affinity if anti else affinity.pod_affinity) or PodAffinity()
        if required is not None:
            current = dataclasses.replace(
                current,
                required_during_scheduling_ignored_during_execution=(
                    *(current.required_during_scheduling_ignored_during_execution or ()),
                    required,
                ),
            )
        if preferred is not None:
            current = dataclasses.replace(
                current,
                preferred_during_scheduling_ignored_during_execution=(
                    *(current.preferred_during_scheduling_ignored_during_execution or ()),
                    preferred,
                ),
            )
        self._affinity(**{"pod_anti_affinity" if anti else "pod_affinity": current})
        return self

    def pod_affinity(self, term: PodAffinityTerm, *, weight: int | None = None) -> PodBuilder:
        """Required pod affinity, or preferred with ``weight``."""
        if weight is None:
            return self._pod_affinity(False, term, None)
        return self._pod_affinity(
            False, None, WeightedPodAffinityTerm(weight=weight, pod_affinity_term=term)
        )

    def pod_anti_affinity(self, term: PodAffinityTerm, *, weight: int | None = None) -> PodBuilder:
        """Required pod anti-affinity, or preferred with ``weight``."""
        if weight is None:
            return self._pod_affinity(True, term, None)
        return self._pod_affinity(
            True, None, WeightedPodAffinityTerm(weight=weight, pod_affinity_term=term)
        )

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str,
        selector: LabelSelector | None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: tuple[str, ...] | None = None,
    ) -> PodBuilder:
        """Upstream ``SpreadConstraint(maxSkew, key, when, selector, minDomains, ...)``."""
        added = TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=topology_key,
            when_unsatisfiable=when_unsatisfiable,
            label_selector=selector,
            min_domains=min_domains,
            node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy,
            match_label_keys=match_label_keys,
        )
        self._spec = dataclasses.replace(
            self._spec,
            topology_spread_constraints=(*(self._spec.topology_spread_constraints or ()), added),
        )
        return self

    def spec(self, **changes: Any) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, **changes)
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._status = dataclasses.replace(self._status or PodStatus(), phase=phase)
        return self

    def started(self, at: str) -> PodBuilder:
        """``status.startTime`` (when the kubelet started the pod)."""
        self._status = dataclasses.replace(self._status or PodStatus(), start_time=at)
        return self

    def created(self, at: str) -> PodBuilder:
        """``metadata.creationTimestamp``."""
        self._meta = dataclasses.replace(self._meta, creation_timestamp=at)
        return self

    def annotate(self, key: str, value: str) -> PodBuilder:
        merged = dict(self._meta.annotations or {})
        merged[key] = value
        self._meta = dataclasses.replace(self._meta, annotations=merged)
        return self

    def finalizers(self, *names: str) -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, finalizers=names)
        return self

    def grace(self, seconds: int) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, termination_grace_period_seconds=seconds)
        return self

    def build(self) -> Pod:
        return Pod(metadata=self._meta, spec=self._spec, status=self._status)


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._meta = ObjectMeta(name=name)
        self._spec = NodeSpec()
        self._status = NodeStatus()

    def allocatable(self, **values: str) -> NodeBuilder:
        quantities = _resources(values)
        self._status = dataclasses.replace(
            self._status, allocatable=quantities, capacity=quantities
        )
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self._meta = dataclasses.replace(self._meta, labels=labels)
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._meta = dataclasses.replace(
            self._meta, labels={**(self._meta.labels or {}), key: value}
        )
        return self

    def resources(self, values: dict[str, str]) -> NodeBuilder:
        """Capacity and allocatable from resource name -> quantity (any resource name)."""
        quantities = _quantities(values)
        self._status = dataclasses.replace(
            self._status, allocatable=quantities, capacity=quantities
        )
        return self

    def taint(self, key: str, value: str, effect: str) -> NodeBuilder:
        taints = (*(self._spec.taints or ()), Taint(key=key, value=value, effect=effect))
        self._spec = dataclasses.replace(self._spec, taints=taints)
        return self

    def condition(self, type_: str, status: str) -> NodeBuilder:
        """Set condition ``type_`` (``Ready``, ...) to ``status``."""
        kept = [c for c in self._status.conditions or () if c.type != type_]
        self._status = dataclasses.replace(
            self._status, conditions=(*kept, NodeCondition(type=type_, status=status))
        )
        return self

    def unschedulable(self) -> NodeBuilder:
        self._spec = dataclasses.replace(self._spec, unschedulable=True)
        return self

    def build(self) -> Node:
        return Node(metadata=self._meta, spec=self._spec, status=self._status)


def pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def pod_template(labels: dict[str, str], *, restart_policy: str | None = None) -> PodTemplateSpec:
    """A valid workload pod template, as a user writes one: labels (which the workload's
    selector must match) and one container with an image. Jobs need ``restart_policy``
    ``"Never"`` or ``"OnFailure"`` (ValidateJobSpec)."""
    spec = pod("t").build().spec
    assert spec is not None
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=dict(labels)),
        spec=dataclasses.replace(spec, restart_policy=restart_policy),
    )


def with_image(template: PodTemplateSpec, image: str) -> PodTemplateSpec:
    """The template with its first (only) container's image changed: a rollout's trigger."""
    assert template.spec is not None
    assert template.spec.containers
    container = dataclasses.replace(template.spec.containers[0], image=image)
    return dataclasses.replace(
        template, spec=dataclasses.replace(template.spec, containers=(container,))
    )


def priority_class(
    name: str, value: int, *, global_default: bool | None = None, policy: str | None = None
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name),
        value=value,
        global_default=global_default,
        preemption_policy=policy,
    )


# --- selector and affinity term helpers ----------------------------------------------------


def requirement(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    """A node selector requirement (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``)."""
    return NodeSelectorRequirement(key=key, operator=operator, values=values or None)


def node_term(
    *expressions: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
) -> NodeSelectorTerm:
    """A node selector term: label expressions AND field expressions."""
    return NodeSelectorTerm(match_expressions=expressions or None, match_fields=fields or None)


def label_selector(
    match_labels: dict[str, str] | None = None,
    *expressions: tuple[str, str, tuple[str, ...]],
) -> LabelSelector:
    """A ``metav1.LabelSelector``; expressions are (key, operator, values)."""
    return LabelSelector(
        match_labels=match_labels,
        match_expressions=tuple(
            LabelSelectorRequirement(key=k, operator=op, values=v or None)
            for k, op, v in expressions
        )
        or None,
    )


def affinity_term(
    topology_key: str,
    selector: LabelSelector | None,
    *,
    namespaces: tuple[str, ...] | None = None,
    namespace_selector: LabelSelector | None = None,
) -> PodAffinityTerm:
    """A pod (anti-)affinity term."""
    return PodAffinityTerm(
        label_selector=selector,
        topology_key=topology_key,
        namespaces=namespaces,
        namespace_selector=namespace_selector,
    )


def stored_listers(*objects: Any) -> tuple[Any, Any]:
    """A MemoryStore holding ``objects`` as given (no defaulting or validation, like
    upstream tests that add classes straight to an informer) and listers over it."""
    from kubeprio.api import kinds
    from kubeprio.apiserver.listers import StoreListers
    from kubeprio.store.interface import ObjectKey
    from kubeprio.store.memory import MemoryStore

    store = MemoryStore()
    for obj in objects:
        info = kinds.for_object(obj)
        key = ObjectKey(info.plural, obj.metadata.namespace or "", obj.metadata.name or "")
        store.create(key, obj)
    return store, StoreListers(store)


def admission_request(
    obj: Any,
    *,
    operation: str = "CREATE",
    old: Any = None,
    subresource: str = "",
    model: type[Any] | None = None,
    name: str | None = None,
) -> Any:
    """An AdmissionRequest for ``obj`` (or for ``model`` when ``obj`` is None)."""
    from kubeprio.admission.chain import AdmissionRequest, Operation
    from kubeprio.api import kinds

    target = obj if obj is not None else old
    info = kinds.for_model(model or type(target))
    metadata = target.metadata
    return AdmissionRequest(
        Operation(operation),
        info,
        obj,
        old,
        metadata.namespace or "",
        metadata.name or "" if name is None else name,
        subresource,
    )
