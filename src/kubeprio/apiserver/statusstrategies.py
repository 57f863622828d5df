"""Each kind's status strategy: what a ``/status`` write takes back from the stored object.

Driven by ``strategy.prepare_for_update(new, old, subresource="status")``. Upstream's
generic store runs ``rest.BeforeUpdate`` (``staging/src/k8s.io/apiserver/pkg/registry/
rest/update.go``) for every update, status writes included: the generation, uid (when
the writer sent none), creationTimestamp, deletionTimestamp and a dropped
deletionGracePeriodSeconds come from the stored object (``strategy.kept_on_update``).
Then each kind's ``*StatusStrategy.PrepareForUpdate`` (``pkg/registry/*/*/strategy.go``)
resets its own part, which differs per kind: every one takes back the spec, but what it
does with the rest of the metadata varies, so a status write can change labels,
annotations, finalizers and owner references on some kinds and not on others.

``STATUS_STRATEGIES`` is that difference as data, one row per kind with a ``status``
subresource, naming the upstream function it follows. What a row resets:

* ``RESET_FOR_STATUS``: ``metav1.ResetObjectMetaForStatus`` (``apimachinery/pkg/apis/
  meta/v1/helpers.go``): deletionTimestamp, generation, labels, annotations, finalizers
  and ownerReferences (selfLink too, which kubeprio does not store). managedFields stay
  the writer's, as upstream keeps the field manager's; kubeprio does not compute them,
  so ``metadata.extra`` (where they live) is the writer's on every status write.
* ``WHOLE_METADATA``: the flowcontrol kinds copy the stored ObjectMeta whole (all but
  managedFields).
* a kind's own list (a Deployment its labels; a pod its owner references; an
  APIService labels, annotations, finalizers and owners), or nothing (most kinds:
  ``newX.Spec = oldX.Spec`` only).

A CustomResourceDefinition's status strategy calls ``ResetObjectMetaForStatus`` with the
new object on both sides (v1.32 ``pkg/registry/customresourcedefinition/strategy.go``), so
it resets nothing: the finalizer controller removes its finalizer through ``/status``.

A row may also fix the status up (a pod's qosClass backfill, a volume's phase transition
time, a Node's retired ``status.config``). The lookup is one dict access by type, and the
copies are the ones upstream makes: a pod's status write (the most frequent write) copies
its spec and owner references and nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import APIService
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.certificates import CertificateSigningRequest
from kubeprio.api.core import Namespace, Node, Pod, PodStatus
from kubeprio.api.csi import VolumeAttachment
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.ingress import Ingress
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeStatus,
)
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.service import Service
from kubeprio.api.statefulset import StatefulSet

StatusFixup = Callable[[Any, Any, str], Any]
"""``(new status, stored status, now) -> status``: a kind's own status normalization."""


@dataclass(frozen=True, slots=True)
class StatusStrategy:
    """What one kind's status write takes from the stored object besides its spec."""

    upstream: str
    """The upstream function this row follows (for readers and tests)."""
    reset_metadata: tuple[str, ...] = ()
    """``ObjectMeta`` attributes taken from the stored object."""
    fix_status: StatusFixup | None = None


RESET_FOR_STATUS: Final = (
    "deletion_timestamp",
    "generation",
    "labels",
    "annotations",
    "finalizers",
    "owner_references",
)
"""``metav1.ResetObjectMetaForStatus``."""

WHOLE_METADATA: Final = tuple(name for name in ObjectMeta.__dataclass_fields__ if name != "extra")
"""``newX.ObjectMeta = oldX.ObjectMeta`` with the writer's managedFields (in ``extra``)."""


def backfill_qos_class(status: PodStatus | None, old: PodStatus | None, now: str) -> Any:
    """A pod status write that omits ``qosClass`` keeps the stored one.

    ``podStatusStrategy.PrepareForUpdate`` (``pkg/registry/core/pod/strategy.go``): the
    class is set at creation and immutable, and writers that drop it (old kubelets on a
    rejected pod, or a status built from scratch) get it backfilled instead of failing
    validation. A different, non-empty class still fails (``field is immutable``).
    """
    stored = old.qos_class if old is not None else None
    if not stored or (status is not None and status.qos_class):
        return status
    return evolve(status or PodStatus(), qos_class=stored)


def drop_unused_node_config(status: Any, old: Any, now: str) -> Any:
    """``nodeStatusConfigInUse``: ``status.config`` (the retired dynamic kubelet config)
    is dropped from a status write unless the stored Node already has one."""
    if status is None or "config" not in status.extra:
        return status
    if old is not None and "config" in old.extra:
        return status
    return evolve(status, extra={k: v for k, v in status.extra.items() if k != "config"})


def stamp_phase_transition(
    status: PersistentVolumeStatus | None, old: PersistentVolumeStatus | None, now: str
) -> PersistentVolumeStatus | None:
    """A volume status update that changes the phase gets ``lastPhaseTransitionTime``
    = now (``persistentvolumeStatusStrategy.PrepareForUpdate``)."""
    if status is None or (old is not None and status.phase == old.phase) or not now:
        return status
    return evolve(status, last_phase_transition_time=now)


def _spec_only(upstream: str) -> StatusStrategy:
    return StatusStrategy(upstream=upstream)


STATUS_STRATEGIES: Final[dict[type[Any], StatusStrategy]] = {
    # core
    Pod: StatusStrategy(
        "podStatusStrategy.PrepareForUpdate (pkg/registry/core/pod/strategy.go)",
        # Its DeletionTimestamp = nil is undone by BeforeUpdate, which restores the
        # stored one: the same as the carried-over system fields.
        ("owner_references",),
        backfill_qos_class,
    ),
    Node: StatusStrategy(
        "nodeStatusStrategy.PrepareForUpdate (pkg/registry/core/node/strategy.go)",
        fix_status=drop_unused_node_config,
    ),
    Namespace: _spec_only(
        "namespaceStatusStrategy.PrepareForUpdate (pkg/registry/core/namespace/strategy.go)"
    ),
    Service: _spec_only(
        "serviceStatusStrategy.PrepareForUpdate (pkg/registry/core/service/strategy.go)"
    ),
    ResourceQuota: _spec_only(
        "resourcequotaStatusStrategy.PrepareForUpdate (pkg/registry/core/resourcequota/strategy.go)"
    ),
    PersistentVolume: StatusStrategy(
        "persistentvolumeStatusStrategy.PrepareForUpdate"
        " (pkg/registry/core/persistentvolume/strategy.go)",
        fix_status=stamp_phase_transition,
    ),
    PersistentVolumeClaim: _spec_only(
        "persistentvolumeclaimStatusStrategy.PrepareForUpdate"
        " (pkg/registry/core/persistentvolumeclaim/strategy.go)"
    ),
    ReplicationController: _spec_only(
        "rcStatusStrategy.PrepareForUpdate (pkg/registry/core/replicationcontroller/strategy.go)"
    ),
    # apps
    Deployment: StatusStrategy(
        "deploymentStatusStrategy.PrepareForUpdate (pkg/registry/apps/deployment/strategy.go)",
        ("labels",),
    ),
    ReplicaSet: _spec_only(
        "rsStatusStrategy.PrepareForUpdate (pkg/registry/apps/replicaset/strategy.go)"
    ),
    StatefulSet: _spec_only(
        "statefulSetStatusStrategy.PrepareForUpdate (pkg/registry/apps/statefulset/strategy.go)"
    ),
    DaemonSet: _spec_only(
        "daemonSetStatusStrategy.PrepareForUpdate (pkg/registry/apps/daemonset/strategy.go)"
    ),
    # batch, autoscaling, policy
    Job: _spec_only("jobStatusStrategy.PrepareForUpdate (pkg/registry/batch/job/strategy.go)"),
    CronJob: _spec_only(
        "cronJobStatusStrategy.PrepareForUpdate (pkg/registry/batch/cronjob/strategy.go)"
    ),
    HorizontalPodAutoscaler: _spec_only(
        "autoscalerStatusStrategy.PrepareForUpdate"
        " (pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go)"
    ),
    PodDisruptionBudget: _spec_only(
        "podDisruptionBudgetStatusStrategy.PrepareForUpdate"
        " (pkg/registry/policy/poddisruptionbudget/strategy.go)"
    ),
    # networking, storage, certificates
    Ingress: _spec_only(
        "ingressStatusStrategy.PrepareForUpdate (pkg/registry/networking/ingress/strategy.go)"
    ),
    VolumeAttachment: StatusStrategy(
        "volumeAttachmentStatusStrategy.PrepareForUpdate"
        " (pkg/registry/storage/volumeattachment/strategy.go)",
        RESET_FOR_STATUS,
    ),
    # Its status and approval writes (apiserver.csrstrategy) keep the writer's metadata:
    # csrStatusStrategy and csrApprovalStrategy reset the spec and conditions only.
    CertificateSigningRequest: _spec_only(
        "csrStatusStrategy.PrepareForUpdate (pkg/registry/certificates/certificates/strategy.go)"
    ),
    # flowcontrol, admissionregistration, apiregistration, apiextensions
    FlowSchema: StatusStrategy(
        "flowSchemaStatusStrategy.PrepareForUpdate (pkg/registry/flowcontrol/flowschema/strategy.go)",
        WHOLE_METADATA,
    ),
    PriorityLevelConfiguration: StatusStrategy(
        "priorityLevelConfigurationStatusStrategy.PrepareForUpdate"
        " (pkg/registry/flowcontrol/prioritylevelconfiguration/strategy.go)",
        WHOLE_METADATA,
    ),
    ValidatingAdmissionPolicy: StatusStrategy(
        "validatingAdmissionPolicyStatusStrategy.PrepareForUpdate"
        " (pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go)",
        RESET_FOR_STATUS,
    ),
    APIService: StatusStrategy(
        "apiServerStatusStrategy.PrepareForUpdate"
        " (staging/src/k8s.io/kube-aggregator/pkg/registry/apiservice/strategy.go)",
        ("labels", "annotations", "finalizers", "owner_references"),
    ),
    CustomResourceDefinition: _spec_only(
        "statusStrategy.PrepareForUpdate"
        " (apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go)"
    ),
}
"""Every kind with a ``status`` subresource, by model type."""

_NO_RESET: Final = StatusStrategy(upstream="")


def before_update(new: ObjectMeta, old: ObjectMeta) -> dict[str, Any]:
    """The metadata every update takes from the stored object (upstream
    ``rest.BeforeUpdate``): the uid when the writer sent none (a different one fails
    validation, as ``metadata.uid`` is immutable, which guards against updating a
    recreated object), the creation and deletion marks, and the generation, which a
    main-resource strategy bumps itself when the spec changes."""
    return {
        "uid": new.uid or old.uid,
        "creation_timestamp": old.creation_timestamp,
        "deletion_timestamp": old.deletion_timestamp,
        "deletion_grace_period_seconds": old.deletion_grace_period_seconds,
        "generation": old.generation,
    }


def status_metadata(new: ObjectMeta, old: ObjectMeta, reset: tuple[str, ...]) -> ObjectMeta:
    """The metadata a status write stores: ``before_update``'s system fields and the
    strategy's resets from ``old``, the rest as the writer sent it."""
    changes = before_update(new, old)
    for name in reset:
        changes[name] = getattr(old, name)
    return evolve(new, **changes)


def prepare_status_update(new: Any, old: Any, now: str) -> Any:
    """A ``/status`` write of ``new`` over the stored ``old``, as upstream stores it."""
    row = STATUS_STRATEGIES.get(type(new), _NO_RESET)
    status = new.status
    if row.fix_status is not None:
        status = row.fix_status(status, old.status, now)
    metadata = old.metadata
    if new.metadata != metadata:
        # Most status writers (the kubelet's and the scheduler's patches) send the stored
        # metadata back unchanged: that case needs no copy.
        metadata = status_metadata(new.metadata, metadata, row.reset_metadata)
    return evolve(new, metadata=metadata, spec=old.spec, status=status)
