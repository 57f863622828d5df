"""Defaulting: the values the API server fills in before admission, per kind.

Mirrors upstream ``pkg/apis/core/v1/defaults.go`` (with the generated
``zz_generated.defaults.go`` that decides which function runs where),
``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/batch/v1/defaults.go`` and
``pkg/apis/scheduling/v1/defaults.go``; policy/v1 has no defaults. Services, Endpoints
and EndpointSlices are defaulted by ``api.servicedefaults``, DaemonSets by
``api.daemonsetdefaults``, StatefulSets by ``api.statefulsetdefaults``, NetworkPolicies
and IngressClasses by ``api.networkingdefaults``. A Secret's ``stringData`` is
merged into its ``data`` here too: upstream does it while converting the decoded v1
object (``Convert_v1_Secret_To_core_Secret``), right after defaulting. Defaults that fall on
fields kubeprio does not model (``dnsPolicy``, ``enableServiceLinks``, a container's
``imagePullPolicy`` and ``terminationMessagePath``/``Policy``, the pod
``securityContext``, a Deployment's ``strategy``, a Job's ``podReplacementPolicy``) are
written into the ``extra`` of the nearest model, because a real API server returns them
and ``kubectl get -o yaml`` shows them.

Pods, pod templates and containers are defaulted by ``api.poddefaults`` (its public
functions are re-exported here); the workload defaulters below reach their templates
through ``default_pod_template``.

``default_object`` dispatches on the model class; kinds without rules come back
unchanged. Defaulting is idempotent. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api import (
    admissionpolicydefaults,
    networkingdefaults,
    storagedefaults,
    webhookconfiguration,
)
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.autoscalingdefaults import default_horizontal_pod_autoscaler
from kubeprio.api.batch import (
    ALLOW_CONCURRENT,
    CronJob,
    CronJobSpec,
    Job,
    JobSpec,
    JobTemplateSpec,
    PodFailurePolicy,
)
from kubeprio.api.core import (
    PREEMPT_LOWER_PRIORITY,
    Namespace,
    Node,
    NodeStatus,
    NodeSystemInfo,
    Pod,
)
from kubeprio.api.crddefaults import default_custom_resource_definition
from kubeprio.api.csi import (
    CSIDriver,
    CSINode,
    VolumeAttachment,
    default_csi_driver,
    default_csi_node,
    default_volume_attachment,
)
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.daemonsetdefaults import default_daemon_set
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.flowcontrol import (
    FlowSchema,
    PriorityLevelConfiguration,
    default_flow_schema,
    default_priority_level,
)
from kubeprio.api.ingress import IngressClass
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.limitrangedefaults import default_limit_range
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import INT32_MAX, JsonDict, evolve
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.poddefaults import (
    default_container,
    default_pod,
    default_pod_spec,
    default_pod_template,
    default_pull_policy,
    default_resource_list,
    image_tag,
    with_extra_defaults,
    with_service_account_name,
)
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.rbac import ClusterRoleBinding, RoleBinding, default_binding
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.replicationcontrollerdefaults import default_replication_controller
from kubeprio.api.runtimeclass import RuntimeClass, default_runtime_class
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.secret import SECRET_TYPE_OPAQUE, Secret
from kubeprio.api.service import Service
from kubeprio.api.servicedefaults import (
    default_endpoint_slice,
    default_endpoints,
    default_service,
)
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.statefulsetdefaults import default_stateful_set
from kubeprio.api.storageclass import StorageClass
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)

LABEL_METADATA_NAME: Final = "kubernetes.io/metadata.name"


# --- workloads --------------------------------------------------------------------------------


def _default_strategy(extra: JsonDict) -> JsonDict | None:
    """``SetDefaults_Deployment``'s strategy part: RollingUpdate with 25%/25%."""
    strategy = extra.get("strategy")
    if not isinstance(strategy, dict):
        strategy = {}
    new = dict(strategy)
    if not new.get("type"):
        new["type"] = "RollingUpdate"
    if new["type"] == "RollingUpdate":
        rolling = new.get("rollingUpdate")
        rolling = dict(rolling) if isinstance(rolling, dict) else {}
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = "25%"
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = "25%"
        new["rollingUpdate"] = rolling
    if new == strategy and "strategy" in extra:
        return None
    return {**extra, "strategy": new}


def default_deployment(deployment: Deployment) -> Deployment:
    """``SetDefaults_Deployment``: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600s."""
    spec = deployment.spec or DeploymentSpec()
    changes: dict[str, Any] = {}
    if spec.replicas is None:
        changes["replicas"] = 1
    if spec.revision_history_limit is None:
        changes["revision_history_limit"] = 10
    if spec.progress_deadline_seconds is None:
        changes["progress_deadline_seconds"] = 600
    extra = _default_strategy(spec.extra)
    if extra is not None:
        changes["extra"] = extra
    template = default_pod_template(spec.template)
    if template is not spec.template:
        changes["template"] = template
    if not changes and deployment.spec is not None:
        return deployment
    return evolve(deployment, spec=evolve(spec, **changes))


def default_replica_set(replica_set: ReplicaSet) -> ReplicaSet:
    """``SetDefaults_ReplicaSet``: replicas 1; the template gets pod-spec defaults."""
    spec = replica_set.spec or ReplicaSetSpec()
    changes: dict[str, Any] = {}
    if spec.replicas is None:
        changes["replicas"] = 1
    template = default_pod_template(spec.template)
    if template is not spec.template:
        changes["template"] = template
    if not changes and replica_set.spec is not None:
        return replica_set
    return evolve(replica_set, spec=evolve(spec, **changes))


def _default_limit_range(lr: LimitRange) -> LimitRange:
    """``SetObjectDefaults_LimitRange`` (``api.limitrangedefaults``)."""
    return default_limit_range(lr, default_list=default_resource_list)


def _default_persistent_volume(pv: PersistentVolume) -> PersistentVolume:
    """``SetObjectDefaults_PersistentVolume`` (``api.storagedefaults``)."""
    return storagedefaults.default_persistent_volume(pv, default_resource_list)


def _default_persistent_volume_claim(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    """``SetObjectDefaults_PersistentVolumeClaim`` (``api.storagedefaults``)."""
    return storagedefaults.default_persistent_volume_claim(pvc, default_resource_list)


def _default_daemon_set(ds: DaemonSet) -> DaemonSet:
    """``SetDefaults_DaemonSet`` (``api.daemonsetdefaults``) with the template defaults here."""
    return default_daemon_set(ds, default_template=default_pod_template)


def _default_stateful_set(sts: StatefulSet) -> StatefulSet:
    """``SetDefaults_StatefulSet`` (``api.statefulsetdefaults``) with the template defaults here."""
    return default_stateful_set(sts, default_template=default_pod_template)


def _default_replication_controller(rc: ReplicationController) -> ReplicationController:
    """``SetDefaults_ReplicationController`` (``api.replicationcontrollerdefaults``) with the
    template defaults here."""
    return default_replication_controller(rc, default_template=default_pod_template)


def copy_template_labels(job: Job) -> Job:
    """``SetDefaults_Job``'s label rule: a Job without labels takes its template's labels."""
    template = job.spec.template if job.spec else None
    labels = template.metadata.labels if template and template.metadata else None
    if labels is None or job.metadata.labels:
        return job
    return evolve(job, metadata=evolve(job.metadata, labels=dict(labels)))


def _default_pod_failure_policy(policy: PodFailurePolicy | None) -> PodFailurePolicy | None:
    """Each ``onPodConditions`` pattern without a status matches ``True``."""
    if policy is None or not policy.rules:
        return policy
    rules = []
    changed = False
    for rule in policy.rules:
        patterns = rule.on_pod_conditions
        if patterns and any(not p.status for p in patterns):
            patterns = tuple(p if p.status else evolve(p, status="True") for p in patterns)
            rule = evolve(rule, on_pod_conditions=patterns)
            changed = True
        rules.append(rule)
    return evolve(policy, rules=tuple(rules)) if changed else policy


def _job_spec_inner_defaults(spec: JobSpec) -> dict[str, Any]:
    """What the generated defaulters set inside any ``JobSpec`` (a Job's, or a CronJob's
    job template's): pod failure policy patterns and the pod template's defaults."""
    changes: dict[str, Any] = {}
    policy = _default_pod_failure_policy(spec.pod_failure_policy)
    if policy is not spec.pod_failure_policy:
        changes["pod_failure_policy"] = policy
    template = default_pod_template(spec.template)
    if template is not spec.template:
        changes["template"] = template
    return changes


def default_job(job: Job) -> Job:
    """``SetDefaults_Job``: completions/parallelism 1, backoffLimit 6, NonIndexed, not suspended."""
    spec = job.spec or JobSpec()
    changes: dict[str, Any] = {}
    if spec.completions is None and spec.parallelism is None:
        # A non-parallel job: both default to 1. Otherwise completions stays unset.
        changes["completions"] = 1
    if spec.parallelism is None:
        changes["parallelism"] = 1
    if spec.backoff_limit is None:
        per_index = spec.extra.get("backoffLimitPerIndex") is not None
        changes["backoff_limit"] = INT32_MAX if per_index else 6
    if spec.completion_mode is None:
        changes["completion_mode"] = "NonIndexed"
    if spec.suspend is None:
        changes["suspend"] = False
    changes.update(_job_spec_inner_defaults(spec))
    replacement = "Failed" if spec.pod_failure_policy is not None else "TerminatingOrFailed"
    extra = with_extra_defaults(spec.extra, {"podReplacementPolicy": replacement})
    if extra is not None:
        changes["extra"] = extra
    if changes or job.spec is None:
        job = evolve(job, spec=evolve(spec, **changes))
    return copy_template_labels(job)


DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: Final = 3
DEFAULT_FAILED_JOBS_HISTORY_LIMIT: Final = 1


def default_cron_job(cron_job: CronJob) -> CronJob:
    """``SetObjectDefaults_CronJob``: ``SetDefaults_CronJob`` (concurrencyPolicy Allow, not
    suspended, history limits 3 successful and 1 failed), then what the generated
    defaulter reaches inside the job template: pod failure policy patterns (status
    ``True``) and the pod template's pod-spec defaults. ``SetDefaults_Job`` is not among
    them (it is registered for ``Job``, not ``JobSpec``), so a template's completions,
    parallelism and backoffLimit stay unset until a Job is made from it."""
    spec = cron_job.spec or CronJobSpec()
    changes: dict[str, Any] = {}
    if not spec.concurrency_policy:
        changes["concurrency_policy"] = ALLOW_CONCURRENT
    if spec.suspend is None:
        changes["suspend"] = False
    if spec.successful_jobs_history_limit is None:
        changes["successful_jobs_history_limit"] = DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT
    if spec.failed_jobs_history_limit is None:
        changes["failed_jobs_history_limit"] = DEFAULT_FAILED_JOBS_HISTORY_LIMIT
    job_template = spec.job_template or JobTemplateSpec()
    job_spec = job_template.spec or JobSpec()
    job_changes = _job_spec_inner_defaults(job_spec)
    if job_changes or job_template.spec is None:
        job_template = evolve(job_template, spec=evolve(job_spec, **job_changes))
    if job_template is not spec.job_template:
        changes["job_template"] = job_template
    if not changes and cron_job.spec is not None:
        return cron_job
    return evolve(cron_job, spec=evolve(spec, **changes))


# --- other kinds ------------------------------------------------------------------------------


def default_namespace(namespace: Namespace) -> Namespace:
    """``SetDefaults_Namespace``: label ``kubernetes.io/metadata.name`` with the name."""
    name = namespace.metadata.name
    if not name or namespace.metadata.label(LABEL_METADATA_NAME) == name:
        return namespace
    labels = {**(namespace.metadata.labels or {}), LABEL_METADATA_NAME: name}
    metadata: ObjectMeta = evolve(namespace.metadata, labels=labels)
    return evolve(namespace, metadata=metadata)


NODE_INFO_STRINGS: Final = (
    "machineID",
    "systemUUID",
    "bootID",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)
"""Unmodelled ``NodeSystemInfo`` strings without ``omitempty``: upstream always sends them."""


def _default_node_info(info: NodeSystemInfo | None) -> NodeSystemInfo | None:
    # Go decodes a missing string as "" and encodes it back (no omitempty), and clients
    # rely on it: the official Python client refuses a nodeInfo without them.
    if info is None:
        return None
    changes: dict[str, Any] = {
        name: ""
        for name in ("kernel_version", "os_image", "container_runtime_version", "kubelet_version")
        if getattr(info, name) is None
    }
    missing = {key: "" for key in NODE_INFO_STRINGS if key not in info.extra}
    if missing:
        changes["extra"] = {**info.extra, **missing}
    return evolve(info, **changes) if changes else info


def _sync_pod_cidrs(node: Node) -> Node:
    """``spec.podCIDR`` and ``spec.podCIDRs`` agree, as after upstream's round trip through
    the internal NodeSpec (``Convert_v1_NodeSpec_To_core_NodeSpec`` fills ``podCIDRs`` from
    a lone ``podCIDR``; ``Convert_core_NodeSpec_To_v1_NodeSpec`` serves ``podCIDRs[0]`` as
    ``podCIDR``), so ``kubectl describe node`` prints both lines."""
    spec = node.spec
    if spec is None:
        return node
    cidrs = spec.extra.get("podCIDRs")
    if isinstance(cidrs, list) and cidrs:
        first = cidrs[0]
        if isinstance(first, str) and spec.pod_cidr != first:
            return evolve(node, spec=evolve(spec, pod_cidr=first))
        return node
    if spec.pod_cidr:
        return evolve(node, spec=evolve(spec, extra={**spec.extra, "podCIDRs": [spec.pod_cidr]}))
    return node


def default_node(node: Node) -> Node:
    """``SetDefaults_NodeStatus``: allocatable defaults to capacity; quantities rounded up;
    ``nodeInfo`` strings are present (empty when unknown), as Go serialises them. The pod
    CIDR fields are kept in step (``_sync_pod_cidrs``)."""
    node = _sync_pod_cidrs(node)
    status = node.status
    if status is None:
        return node
    capacity = default_resource_list(status.capacity)
    allocatable = default_resource_list(status.allocatable)
    if allocatable is None and capacity is not None:
        allocatable = capacity
    node_info = _default_node_info(status.node_info)
    if (
        capacity is status.capacity
        and allocatable is status.allocatable
        and node_info is status.node_info
    ):
        return node
    new_status: NodeStatus = evolve(
        status, capacity=capacity, allocatable=allocatable, node_info=node_info
    )
    return evolve(node, status=new_status)


def default_priority_class(pc: PriorityClass) -> PriorityClass:
    """``SetDefaults_PriorityClass``: preemptionPolicy defaults to PreemptLowerPriority.

    An absent ``value`` becomes 0: upstream's field is a plain ``int32`` without
    ``omitempty`` (``+optional``), so a class created without a value has value 0 and
    is always served with one.
    """
    changes: dict[str, Any] = {}
    if pc.preemption_policy is None:
        changes["preemption_policy"] = PREEMPT_LOWER_PRIORITY
    if pc.value is None:
        changes["value"] = 0
    return evolve(pc, **changes) if changes else pc


def default_pod_template_object(pod_template: PodTemplate) -> PodTemplate:
    """A PodTemplate's ``template`` gets the pod-spec defaults (``SetDefaults_PodSpec``
    through the generated ``SetObjectDefaults_PodTemplate``)."""
    template = default_pod_template(pod_template.template)
    if template is pod_template.template:
        return pod_template
    return evolve(pod_template, template=template)


def default_secret(secret: Secret) -> Secret:
    """``SetDefaults_Secret`` (``type`` defaults to ``Opaque``), then the conversion that
    merges ``stringData`` into ``data``: each key's UTF-8 bytes overwrite the key in
    ``data``, and ``stringData`` itself is dropped, so it is never stored or returned."""
    changes: dict[str, Any] = {}
    if not secret.type:
        changes["type"] = SECRET_TYPE_OPAQUE
    if secret.string_data is not None:
        if secret.string_data:
            merged = dict(secret.data or {})
            for key, value in secret.string_data.items():
                merged[key] = value.encode("utf-8", "surrogatepass")
            changes["data"] = merged
        changes["string_data"] = None
    if "stringData" in secret.extra:
        # An explicit ``stringData: null`` lands in extra; it is not stored either.
        changes["extra"] = {k: v for k, v in secret.extra.items() if k != "stringData"}
    return evolve(secret, **changes) if changes else secret


# ValidatingAdmissionPolicy kinds (admissionregistration.k8s.io/v1).
_ADMISSION_POLICY_DEFAULTERS: Final[dict[type[Any], Callable[[Any], Any]]] = {
    ValidatingAdmissionPolicy: admissionpolicydefaults.default_validating_admission_policy,
    ValidatingAdmissionPolicyBinding: (
        admissionpolicydefaults.default_validating_admission_policy_binding
    ),
}

_DEFAULTERS: Final[dict[type[Any], Callable[[Any], Any]]] = {
    Pod: default_pod,
    Deployment: default_deployment,
    ReplicaSet: default_replica_set,
    ReplicationController: _default_replication_controller,
    DaemonSet: _default_daemon_set,
    StatefulSet: _default_stateful_set,
    Job: default_job,
    CronJob: default_cron_job,
    HorizontalPodAutoscaler: default_horizontal_pod_autoscaler,
    Namespace: default_namespace,
    Node: default_node,
    PriorityClass: default_priority_class,
    Service: default_service,
    Endpoints: default_endpoints,
    EndpointSlice: default_endpoint_slice,
    Secret: default_secret,
    LimitRange: _default_limit_range,
    PersistentVolume: _default_persistent_volume,
    PersistentVolumeClaim: _default_persistent_volume_claim,
    StorageClass: storagedefaults.default_storage_class,
    CSIDriver: default_csi_driver,
    CSINode: default_csi_node,
    VolumeAttachment: default_volume_attachment,
    RuntimeClass: default_runtime_class,
    PodTemplate: default_pod_template_object,
    # API Priority and Fairness (api.flowcontrol).
    FlowSchema: default_flow_schema,
    PriorityLevelConfiguration: default_priority_level,
    NetworkPolicy: networkingdefaults.default_network_policy,
    IngressClass: networkingdefaults.default_ingress_class,
    RoleBinding: default_binding,
    ClusterRoleBinding: default_binding,
    **_ADMISSION_POLICY_DEFAULTERS,
    # admissionregistration.k8s.io/v1 webhook configurations.
    MutatingWebhookConfiguration: webhookconfiguration.default_mutating_webhook_configuration,
    ValidatingWebhookConfiguration: webhookconfiguration.default_validating_webhook_configuration,
    CustomResourceDefinition: default_custom_resource_definition,
}


def default_object(obj: object) -> object:
    """Apply the defaults of ``obj``'s kind."""
    defaulter = _DEFAULTERS.get(type(obj))
    return obj if defaulter is None else defaulter(obj)


_STATUS_BODY_DEFAULTS_UNSEEN: Final = frozenset(
    {Pod, Deployment, ReplicaSet, DaemonSet, StatefulSet, CronJob}
)
"""Kinds whose ``/status`` body defaults never reach the stored object: their v1.32
defaulters (``pkg/apis/core/v1/defaults.go``, ``apps/v1``, ``batch/v1``) set spec and
template fields only, none of the status or the metadata, and each kind's status strategy
puts the stored spec back (``podStatusStrategy``, ``deploymentStatusStrategy``, ...). So
defaulting such a body (the pod template walk, about 16 µs, on every kubelet, scheduler
and workload-controller status write) changes nothing that is stored or validated. A Job
and a ReplicationController are still defaulted: their defaulters copy template labels
into the metadata."""


def default_status_body(obj: object) -> object:
    """``default_object`` for a ``/status`` write's body: the decoder defaults every body
    upstream (a Node's ``allocatable`` from its ``capacity``), except that a kind in
    ``_STATUS_BODY_DEFAULTS_UNSEEN`` is returned as it is, since nothing its defaults
    set survives the status strategy."""
    if type(obj) in _STATUS_BODY_DEFAULTS_UNSEEN:
        return obj
    return default_object(obj)


__all__ = [
    "copy_template_labels",
    "default_container",
    "default_cron_job",
    "default_deployment",
    "default_job",
    "default_namespace",
    "default_node",
    "default_object",
    "default_pod",
    "default_pod_spec",
    "default_pod_template",
    "default_priority_class",
    "default_pull_policy",
    "default_replica_set",
    "default_secret",
    "default_status_body",
    "image_tag",
    "with_service_account_name",
]
