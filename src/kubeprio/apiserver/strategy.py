"""Per-kind storage rules (upstream's REST "strategies"): what create and update may touch.

* ``prepare_for_create``: system fields (uid, creationTimestamp, generation) and the
  status a new object starts with (pods start ``Pending`` with their QoS class,
  workloads and PDBs start with an empty status, ReplicationControllers with
  ``replicas: 0``; nodes keep theirs, as kubelets create them with status). A DaemonSet's template generation is kept by
  ``apiserver.templategeneration``; a StatefulSet's alpha ``rollingUpdate.maxUnavailable``
  is dropped (``drop_max_unavailable``). A Job without ``manualSelector`` gets its generated selector and
  template labels (``generateSelector`` in ``pkg/registry/batch/job/strategy.go``).
* ``prepare_for_update``: a main-resource update cannot change ``status``; a ``status``
  update cannot change the spec, and what else of the metadata it takes back from the
  stored object is each kind's own (``apiserver.statusstrategies``: a pod keeps its owner
  references, a Deployment its labels, a VolumeAttachment all but name and uid, ...);
  system metadata is carried over (``rest.BeforeUpdate``); ``metadata.generation``
  moves when the spec changes.
* an ``ephemeralcontainers`` update of a pod changes ``spec.ephemeralContainers`` and
  nothing else (``podEphemeralContainersStrategy``); a main update keeps them as sent, so
  adding one there fails validation, as upstream.
* PersistentVolumes start ``Pending`` with ``lastPhaseTransitionTime``, stamped again
  whenever a status update changes the phase; claims start ``Pending`` with their data
  sources normalized (``pkg/registry/core/persistentvolume{,claim}/strategy.go``).
* Ingresses start with an empty status (``loadBalancer: {}``); Ingresses, IngressClasses
  and NetworkPolicies count spec changes in ``metadata.generation``
  (``pkg/registry/networking/*/strategy.go``).
* CertificateSigningRequests record their requester on create and change only through
  ``status`` and ``approval`` (``apiserver.csrstrategy``).
* ``check_delete``: objects the registry refuses to delete (the system PriorityClasses).
* A ServiceAccount's ``secrets`` keep only their names, on create and update
  (``cleanSecretReferences`` in ``pkg/registry/core/serviceaccount/strategy.go``).
  ConfigMaps and Secrets have no strategy of their own (a Secret's ``stringData`` is
  merged by ``api.defaults``).

Mirrors ``PrepareForCreate``/``PrepareForUpdate`` in ``pkg/registry/*/strategy.go`` and
the ``Delete`` override of ``pkg/registry/scheduling/priorityclass/storage/storage.go``.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors, kinds
from kubeprio.api.admissionpolicy import (
    TypeChecking,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyStatus,
)
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import (
    APIService,
    APIServiceStatus,
    is_local,
    local_available_condition,
)
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.autoscaling import EMPTY_STATUS as EMPTY_HPA_STATUS
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job, JobSpec
from kubeprio.api.certificates import CertificateSigningRequest
from kubeprio.api.core import (
    PHASE_PENDING,
    Namespace,
    NamespaceStatus,
    ObjectReference,
    Pod,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
)
from kubeprio.api.csi import EMPTY_ATTACHMENT_STATUS, VolumeAttachment
from kubeprio.api.daemonset import EMPTY_STATUS, DaemonSet
from kubeprio.api.defaults import copy_template_labels
from kubeprio.api.flowcontrol import (
    FlowSchema,
    FlowSchemaStatus,
    PriorityLevelConfiguration,
    PriorityLevelConfigurationStatus,
)
from kubeprio.api.ingress import (
    Ingress,
    IngressClass,
    IngressLoadBalancerStatus,
    IngressStatus,
)
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS, ResourceInfo
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.persistentvolume import (
    CLAIM_PENDING,
    VOLUME_PENDING,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
    TypedLocalObjectReference,
    TypedObjectReference,
)
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.replicationcontroller import EMPTY_STATUS as EMPTY_RC_STATUS
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaStatus
from kubeprio.api.resources import qos_class
from kubeprio.api.scheduling import PriorityClass, system_priority_class
from kubeprio.api.service import LoadBalancerStatus, Service, ServiceStatus
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.statefulset import EMPTY_STATUS as EMPTY_STATEFUL_SET_STATUS
from kubeprio.api.statefulset import StatefulSet
from kubeprio.apiserver import csrstrategy, templategeneration
from kubeprio.apiserver.crdstrategy import crd_status_for_create, with_storage_version
from kubeprio.apiserver.statusstrategies import before_update, prepare_status_update

STATUS_KINDS: Final = tuple(
    info.model for info in kinds.RESOURCES if info.has_subresource("status")
)
"""Kinds with a ``status`` subresource (as the resource table lists them): main updates
keep the stored status."""

GENERATION_KINDS: Final = (
    PodDisruptionBudget,
    Deployment,
    ReplicaSet,
    ReplicationController,
    DaemonSet,
    StatefulSet,
    Job,
    CronJob,
    Ingress,
    IngressClass,
    NetworkPolicy,
    PodTemplate,
    FlowSchema,
    PriorityLevelConfiguration,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    CustomResourceDefinition,
)
"""Kinds whose ``metadata.generation`` counts spec changes (a PodTemplate's ``template``
changes: ``podTemplateStrategy``; the flowcontrol kinds' strategies, whose generation the
bootstrap ensurer reads)."""


def has_status_subresource(obj: object) -> bool:
    """Whether ``obj``'s kind has a ``status`` subresource."""
    return isinstance(obj, STATUS_KINDS)


def prepare_for_create(obj: Any, *, uid: str, now: str, user: UserInfo | None = None) -> Any:
    """Set system metadata and the initial status of a new object (a
    CertificateSigningRequest also records ``user`` as its requester)."""
    metadata: ObjectMeta = evolve(
        obj.metadata,
        uid=uid,
        creation_timestamp=now,
        resource_version=None,
        deletion_timestamp=None,
        deletion_grace_period_seconds=None,
        generation=1 if isinstance(obj, GENERATION_KINDS) else obj.metadata.generation,
    )
    if isinstance(obj, CertificateSigningRequest):
        return csrstrategy.prepare_for_create(obj, metadata, user)
    changes: dict[str, Any] = {"metadata": metadata}
    if isinstance(obj, Pod):
        changes["status"] = PodStatus(
            phase=PHASE_PENDING, qos_class=qos_class(obj.spec or PodSpec())
        )
    elif isinstance(obj, Namespace):
        changes["status"] = NamespaceStatus(phase="Active")
    elif isinstance(obj, DaemonSet):
        # PrepareForCreate resets the status; Go's JSON always sends its four plain counts.
        changes["status"] = EMPTY_STATUS
    elif isinstance(obj, ReplicationController):
        # PrepareForCreate resets the status; Go's JSON always sends ``replicas``.
        changes["status"] = EMPTY_RC_STATUS
    elif isinstance(obj, StatefulSet):
        changes["status"] = EMPTY_STATEFUL_SET_STATUS
        changes["spec"] = drop_max_unavailable(obj.spec, None)
    elif isinstance(obj, Ingress):
        # PrepareForCreate resets the status; Go's JSON writes it as {loadBalancer: {}}.
        changes["status"] = IngressStatus(load_balancer=IngressLoadBalancerStatus())
    elif isinstance(obj, ValidatingAdmissionPolicy):
        changes["status"] = checked_policy_status(1)
    elif isinstance(obj, CustomResourceDefinition):
        changes["status"] = crd_status_for_create(obj)
    elif isinstance(obj, IngressClass | NetworkPolicy | ValidatingAdmissionPolicyBinding):
        pass  # generation 1 only: neither has a status in v1.32
    elif isinstance(obj, FlowSchema):
        # PrepareForCreate resets the status; Go's JSON writes the empty struct as {}.
        changes["status"] = FlowSchemaStatus()
    elif isinstance(obj, PriorityLevelConfiguration):
        changes["status"] = PriorityLevelConfigurationStatus()
    elif isinstance(obj, GENERATION_KINDS) and not isinstance(obj, PodTemplate):
        changes["status"] = None
    elif isinstance(obj, HorizontalPodAutoscaler):
        # PrepareForCreate resets the status; Go's JSON always sends desiredReplicas.
        changes["status"] = EMPTY_HPA_STATUS
    elif isinstance(obj, Service):
        # A new Service starts with an empty status (``loadBalancer: {}``).
        changes["status"] = ServiceStatus(load_balancer=LoadBalancerStatus())
    elif isinstance(obj, ResourceQuota):
        # The quota controller fills it in (upstream's PrepareForCreate resets it).
        changes["status"] = ResourceQuotaStatus()
    elif isinstance(obj, ServiceAccount):
        changes["secrets"] = clean_secret_references(obj.secrets)
    elif isinstance(obj, PersistentVolume):
        # PersistentVolumeLastPhaseTransitionTime (GA in 1.31) stamps the first phase.
        changes["status"] = PersistentVolumeStatus(
            phase=VOLUME_PENDING, last_phase_transition_time=now
        )
    elif isinstance(obj, PersistentVolumeClaim):
        # PrepareForCreate resets the status; the defaults give it phase Pending.
        changes["status"] = PersistentVolumeClaimStatus(phase=CLAIM_PENDING)
        changes["spec"] = normalize_data_sources(obj.spec)
    elif isinstance(obj, VolumeAttachment):
        # volumeAttachmentStrategy.PrepareForCreate resets the status for v1 requests.
        changes["status"] = EMPTY_ATTACHMENT_STATUS
    elif isinstance(obj, APIService):
        # apiServerStrategy.PrepareForCreate: status reset; a local one is Available at once.
        conditions = (local_available_condition(now),) if is_local(obj) else None
        changes["status"] = APIServiceStatus(conditions=conditions)
    obj = evolve(obj, **changes)
    if isinstance(obj, Job):
        obj = generate_job_selector(obj)
    elif isinstance(obj, DaemonSet):
        obj = templategeneration.prepare_for_create(obj)
    return obj


def drop_max_unavailable(spec: Any, old_spec: Any) -> Any:
    """``dropStatefulSetDisabledFields``: ``rollingUpdate.maxUnavailable`` belongs to the
    alpha MaxUnavailableStatefulSet (off), so it is dropped unless the stored object
    already uses it."""
    strategy = spec.update_strategy if spec is not None else None
    rolling = strategy.rolling_update if strategy is not None else None
    if rolling is None or rolling.max_unavailable is None:
        return spec
    old_strategy = old_spec.update_strategy if old_spec is not None else None
    old_rolling = old_strategy.rolling_update if old_strategy is not None else None
    if old_rolling is not None and old_rolling.max_unavailable is not None:
        return spec
    rolling = evolve(rolling, max_unavailable=None)
    return evolve(spec, update_strategy=evolve(strategy, rolling_update=rolling))


def clean_secret_references(
    secrets: tuple[ObjectReference, ...] | None,
) -> tuple[ObjectReference, ...] | None:
    """``cleanSecretReferences``: a ServiceAccount's secret references keep only names."""
    if secrets is None:
        return None
    return tuple(ObjectReference(name=ref.name) for ref in secrets)


JOB_NAME_LABELS: Final = ("job-name", "batch.kubernetes.io/job-name")
CONTROLLER_UID_LABELS: Final = ("controller-uid", "batch.kubernetes.io/controller-uid")


def generate_job_selector(job: Job) -> Job:
    """``generateSelectorIfNeeded``: select the Job's pods by its uid, unless manual.

    The template gets ``job-name``/``controller-uid`` labels (legacy and
    ``batch.kubernetes.io/`` forms) where the user did not set them, and the selector
    gets ``batch.kubernetes.io/controller-uid``; conflicting user values are left for
    validation to reject. ``manualSelector`` is stored as ``false``. The Job then takes
    the template labels if it has none, as upstream's defaulting does when the stored
    object is read back.
    """
    spec = job.spec or JobSpec()
    if spec.manual_selector:
        return job
    template = spec.template or PodTemplateSpec()
    template_meta = template.metadata or ObjectMeta()
    labels = dict(template_meta.labels or {})
    for label in JOB_NAME_LABELS:
        labels.setdefault(label, job.metadata.name or "")
    for label in CONTROLLER_UID_LABELS:
        labels.setdefault(label, job.metadata.uid or "")
    selector = spec.selector or LabelSelector()
    match_labels = dict(selector.match_labels or {})
    match_labels.setdefault("batch.kubernetes.io/controller-uid", job.metadata.uid or "")
    template = evolve(template, metadata=evolve(template_meta, labels=labels))
    spec = evolve(
        spec,
        manual_selector=False,
        selector=evolve(selector, match_labels=match_labels),
        template=template,
    )
    return copy_template_labels(evolve(job, spec=spec))


def _annotations_count(new: Any, old: Any) -> bool:
    """``deploymentStrategy.PrepareForUpdate``: a Deployment's annotation change bumps its
    generation too (they are copied to its ReplicaSets); nil and empty maps are equal."""
    if not isinstance(new, Deployment):
        return False
    return (new.metadata.annotations or {}) != (old.metadata.annotations or {})


def _spec_of(obj: Any) -> Any:
    if isinstance(obj, PodTemplate):
        return obj.template
    return getattr(obj, "spec", None)


def kept_on_update(new: ObjectMeta, old: ObjectMeta) -> ObjectMeta:
    """``new`` with the metadata an update may not change taken from ``old``
    (``statusstrategies.before_update``)."""
    return evolve(new, **before_update(new, old))


def prepare_for_update(new: Any, old: Any, *, subresource: str, now: str = "") -> Any:
    """Carry system fields over from ``old`` and keep each side of the spec/status split."""
    if isinstance(new, CertificateSigningRequest) and subresource in ("status", "approval"):
        prepared = csrstrategy.prepare_for_update(new, old, subresource=subresource, now=now)
        # csrStatusStrategy and csrApprovalStrategy reset the spec and conditions only:
        # the writer's metadata is stored.
        return evolve(prepared, metadata=kept_on_update(new.metadata, old.metadata))
    if subresource == "status":
        return prepare_status_update(new, old, now)
    if subresource == EPHEMERAL_CONTAINERS and isinstance(new, Pod):
        return drop_non_ephemeral_container_updates(new, old)
    if isinstance(new, StatefulSet):
        new = evolve(new, spec=drop_max_unavailable(new.spec, old.spec))
    metadata = kept_on_update(new.metadata, old.metadata)
    if isinstance(new, GENERATION_KINDS) and (
        _spec_of(new) != _spec_of(old) or _annotations_count(new, old)
    ):
        metadata = evolve(metadata, generation=(old.metadata.generation or 0) + 1)
    changes: dict[str, Any] = {"metadata": metadata}
    if has_status_subresource(new):
        changes["status"] = old.status
    if isinstance(new, Namespace):
        changes["spec"] = keep_namespace_finalizers(new.spec, old.spec)
    if isinstance(new, ServiceAccount):
        changes["secrets"] = clean_secret_references(new.secrets)
    elif isinstance(new, CertificateSigningRequest):
        # Requests are immutable but through their status and approval subresources.
        changes["spec"] = old.spec
    if (
        isinstance(new, ValidatingAdmissionPolicy)
        and metadata.generation != old.metadata.generation
    ):
        changes["status"] = checked_policy_status(metadata.generation or 0)
    if isinstance(new, CustomResourceDefinition):
        changes["status"] = with_storage_version(new, old.status)
    new = evolve(new, **changes)
    if isinstance(new, DaemonSet):
        new = templategeneration.prepare_for_update(new, old)
    return new


def keep_namespace_finalizers(spec: Any, old_spec: Any) -> Any:
    """``namespaceStrategy.PrepareForUpdate``: a main update keeps the stored
    ``spec.finalizers`` (only the ``finalize`` subresource changes them)."""
    stored = (old_spec or {}).get("finalizers")
    if (spec or {}).get("finalizers") == stored:
        return spec
    kept = {key: value for key, value in (spec or {}).items() if key != "finalizers"}
    if stored is not None:
        kept["finalizers"] = stored
    return kept or None


def checked_policy_status(generation: int) -> ValidatingAdmissionPolicyStatus:
    """A ValidatingAdmissionPolicy's status once upstream's type-checking controller has
    seen ``generation``: kubeprio checks no expression against the OpenAPI schema (its
    variables are ``dyn``), so it reports no warnings, as the controller does for a
    policy whose expressions type-check (``typeChecking: {}``)."""
    return ValidatingAdmissionPolicyStatus(
        observed_generation=generation, type_checking=TypeChecking()
    )


def normalize_data_sources(
    spec: PersistentVolumeClaimSpec | None,
) -> PersistentVolumeClaimSpec | None:
    """``NormalizeDataSources`` (``pkg/api/persistentvolumeclaim/util.go``): a claim with
    only ``dataSource`` gets the same ``dataSourceRef`` and one with only a same-namespace
    ``dataSourceRef`` the same ``dataSource``."""
    if spec is None:
        return spec
    source, ref = spec.data_source, spec.data_source_ref
    if source is not None and ref is None:
        return evolve(
            spec,
            data_source_ref=TypedObjectReference(
                api_group=source.api_group, kind=source.kind, name=source.name
            ),
        )
    if ref is not None and source is None and not ref.namespace:
        return evolve(
            spec,
            data_source=TypedLocalObjectReference(
                api_group=ref.api_group, kind=ref.kind, name=ref.name
            ),
        )
    return spec


def drop_non_ephemeral_container_updates(new: Pod, old: Pod) -> Pod:
    """``podEphemeralContainersStrategy.PrepareForUpdate``: an ``ephemeralcontainers``
    write changes ``spec.ephemeralContainers`` only. Spec and status are the stored ones,
    and so is the metadata (``ResetObjectMetaForStatus`` keeps the stored labels,
    annotations, finalizers, owners, generation and deletion timestamp; name, uid and
    resourceVersion were checked before)."""
    ephemeral = new.spec.ephemeral_containers if new.spec is not None else None
    return evolve(old, spec=evolve(old.spec or PodSpec(), ephemeral_containers=ephemeral))


def check_delete(info: ResourceInfo, name: str) -> None:
    """Refuse deletes the registry forbids, before the object is even looked up.

    Upstream ``priorityclass/storage.REST.Delete``: the built-in system classes cannot
    be deleted (403 Forbidden), whatever the request's options.
    """
    if info.model is PriorityClass and system_priority_class(name) is not None:
        raise errors.forbidden_error(
            info.plural, info.group, name, "this is a system priority class and cannot be deleted"
        )
