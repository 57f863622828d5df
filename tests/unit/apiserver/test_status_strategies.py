"""Each kind's ``/status`` write keeps and resets what upstream's status strategy does.

One row per kind with a ``status`` subresource. The write changes the labels,
annotations, finalizers, owner references, generation and spec along with the status;
the row says which of those metadata fields the kind's ``*StatusStrategy.PrepareForUpdate``
takes back from the stored object (upstream file in the row). In every row the spec is
the stored one, the status the writer's, and ``rest.BeforeUpdate``
(``staging/src/k8s.io/apiserver/pkg/registry/rest/update.go``) keeps the stored
generation, uid, creationTimestamp and deletionTimestamp.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from kubeprio.api import kinds
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import APIService
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.certificates import CertificateSigningRequest, CertificateSigningRequestStatus
from kubeprio.api.core import Namespace, Node, NodeStatus, Pod, PodStatus
from kubeprio.api.csi import VolumeAttachment
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.ingress import Ingress
from kubeprio.api.meta import ObjectMeta, OwnerReference
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
from kubeprio.apiserver import strategy
from kubeprio.apiserver.statusstrategies import STATUS_STRATEGIES

SPEC_ONLY: Final[frozenset[str]] = frozenset()
RESET_FOR_STATUS: Final = frozenset({"labels", "annotations", "finalizers", "owner_references"})
"""What ``metav1.ResetObjectMetaForStatus`` takes back, of the fields the write changes."""

# (kind, upstream function, metadata fields kept from the stored object)
ROWS: Final[list[tuple[type[Any], str, frozenset[str]]]] = [
    (Pod, "podStatusStrategy.PrepareForUpdate", frozenset({"owner_references"})),
    (Node, "nodeStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (Namespace, "namespaceStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (Service, "serviceStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (ResourceQuota, "resourcequotaStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (PersistentVolume, "persistentvolumeStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (PersistentVolumeClaim, "persistentvolumeclaimStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (ReplicationController, "rcStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (Deployment, "deploymentStatusStrategy.PrepareForUpdate", frozenset({"labels"})),
    (ReplicaSet, "rsStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (StatefulSet, "statefulSetStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (DaemonSet, "daemonSetStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (Job, "jobStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (CronJob, "cronJobStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (HorizontalPodAutoscaler, "autoscalerStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (PodDisruptionBudget, "podDisruptionBudgetStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (Ingress, "ingressStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    (VolumeAttachment, "volumeAttachmentStatusStrategy.PrepareForUpdate", RESET_FOR_STATUS),
    (CertificateSigningRequest, "csrStatusStrategy.PrepareForUpdate", SPEC_ONLY),
    # newFlowSchema.ObjectMeta = oldFlowSchema.ObjectMeta (managedFields aside)
    (FlowSchema, "flowSchemaStatusStrategy.PrepareForUpdate", RESET_FOR_STATUS),
    (
        PriorityLevelConfiguration,
        "priorityLevelConfigurationStatusStrategy.PrepareForUpdate",
        RESET_FOR_STATUS,
    ),
    (
        ValidatingAdmissionPolicy,
        "validatingAdmissionPolicyStatusStrategy.PrepareForUpdate",
        RESET_FOR_STATUS,
    ),
    (
        APIService,
        "apiServerStatusStrategy.PrepareForUpdate",
        frozenset({"labels", "annotations", "finalizers", "owner_references"}),
    ),
    # v1.32 calls ResetObjectMetaForStatus(&newObj.ObjectMeta, &newObj.ObjectMeta): a no-op.
    (CustomResourceDefinition, "statusStrategy.PrepareForUpdate", SPEC_ONLY),
]

CHANGED_FIELDS: Final = ("labels", "annotations", "finalizers", "owner_references")

STORED_META: Final = ObjectMeta(
    name="x",
    uid="uid-1",
    resource_version="7",
    generation=3,
    creation_timestamp="2026-01-01T00:00:00Z",
    labels={"stored": "yes"},
    annotations={"stored": "yes"},
    finalizers=("example.com/stored",),
    owner_references=(OwnerReference(api_version="v1", kind="Node", name="a", uid="ua"),),
)
SENT_META: Final = evolve(
    STORED_META,
    generation=9,
    labels={"sent": "yes"},
    annotations={"sent": "yes"},
    finalizers=("example.com/sent",),
    owner_references=(OwnerReference(api_version="v1", kind="Node", name="b", uid="ub"),),
)

# The status kinds whose strategy reads into the status need real ones; the others'
# status (and every spec) is a marker compared by identity.
STATUSES: Final[dict[type[Any], tuple[Any, Any]]] = {
    Pod: (PodStatus(qos_class="BestEffort"), PodStatus(qos_class="BestEffort", phase="Running")),
    Node: (NodeStatus(), NodeStatus(extra={"phase": "Running"})),
    PersistentVolume: (
        PersistentVolumeStatus(phase="Bound"),
        PersistentVolumeStatus(phase="Bound"),
    ),
    CertificateSigningRequest: (
        CertificateSigningRequestStatus(),
        CertificateSigningRequestStatus(certificate="Y2VydA=="),
    ),
}


def _write(kind: type[Any]) -> tuple[Any, Any, Any]:
    """(stored, sent, what the status strategy stores) for one kind."""
    stored_status, sent_status = STATUSES.get(kind, (object(), object()))
    stored = kind(metadata=STORED_META, spec=object(), status=stored_status)
    sent = kind(metadata=SENT_META, spec=object(), status=sent_status)
    prepared = strategy.prepare_for_update(sent, stored, subresource="status", now="t")
    return stored, sent, prepared


@pytest.mark.parametrize(("kind", "upstream", "kept"), ROWS, ids=[row[0].__name__ for row in ROWS])
def test_status_write_keeps_and_resets_what_upstream_does(
    kind: type[Any], upstream: str, kept: frozenset[str]
) -> None:
    stored, sent, prepared = _write(kind)
    assert upstream in STATUS_STRATEGIES[kind].upstream
    for field in CHANGED_FIELDS:
        source = stored if field in kept else sent
        assert getattr(prepared.metadata, field) == getattr(source.metadata, field), field
    assert prepared.spec is stored.spec
    assert prepared.status == sent.status
    # rest.BeforeUpdate: a request cannot change the generation, uid or timestamps.
    assert prepared.metadata.generation == STORED_META.generation
    assert prepared.metadata.uid == STORED_META.uid
    assert prepared.metadata.creation_timestamp == STORED_META.creation_timestamp


def test_every_status_subresource_has_a_row() -> None:
    """The table, the test rows and the served ``status`` subresources agree."""
    served = {info.model for info in kinds.RESOURCES if info.has_subresource("status")}
    assert set(STATUS_STRATEGIES) == served
    assert {row[0] for row in ROWS} == served


def test_a_status_write_cannot_clear_a_deletion_timestamp() -> None:
    """``podStatusStrategy`` sets it to nil and ``BeforeUpdate`` restores the stored one."""
    deleting = evolve(STORED_META, deletion_timestamp="2026-01-02T00:00:00Z")
    stored = Pod(metadata=deleting, status=PodStatus(qos_class="BestEffort"))
    sent = Pod(metadata=SENT_META, status=PodStatus(qos_class="BestEffort"))
    prepared = strategy.prepare_for_update(sent, stored, subresource="status", now="t")
    assert prepared.metadata.deletion_timestamp == deleting.deletion_timestamp


def test_flowcontrol_status_write_keeps_the_whole_stored_metadata() -> None:
    """``flowSchemaStatusStrategy``: ``ObjectMeta = old.ObjectMeta`` (generateName too)."""
    stored = FlowSchema(metadata=STORED_META, status=object())
    sent = FlowSchema(metadata=evolve(SENT_META, generate_name="fs-"), status=object())
    prepared = strategy.prepare_for_update(sent, stored, subresource="status", now="t")
    assert prepared.metadata == STORED_META


def test_csr_approval_write_stores_the_writers_labels() -> None:
    """``csrApprovalStrategy.PrepareForUpdate`` resets the spec and status but the
    conditions; the metadata is the writer's."""
    status = CertificateSigningRequestStatus()
    stored = CertificateSigningRequest(metadata=STORED_META, spec=object(), status=status)
    sent = CertificateSigningRequest(metadata=SENT_META, spec=object(), status=status)
    prepared = strategy.prepare_for_update(sent, stored, subresource="approval", now="t")
    assert prepared.metadata.labels == SENT_META.labels
    assert prepared.spec is stored.spec


# --- main-resource updates -----------------------------------------------------------------


def test_deployment_annotation_change_bumps_the_generation_on_a_main_update_only() -> None:
    """``deploymentStrategy.PrepareForUpdate`` counts annotation changes (they are copied to
    the ReplicaSets); ``deploymentStatusStrategy`` does not (``rest.BeforeUpdate``)."""
    stored = Deployment(metadata=STORED_META, spec=None, status=None)
    annotated = evolve(STORED_META, annotations={"note": "x"})
    main = strategy.prepare_for_update(
        Deployment(metadata=annotated, spec=None, status=None), stored, subresource=""
    )
    status = strategy.prepare_for_update(
        Deployment(metadata=annotated, spec=None, status=None), stored, subresource="status"
    )
    assert main.metadata.generation == 4
    assert status.metadata.generation == 3
    assert status.metadata.annotations == {"note": "x"}
    # a nil and an empty map are the same (apiequality.Semantic.DeepEqual)
    bare = Deployment(metadata=evolve(STORED_META, annotations=None), spec=None)
    same = strategy.prepare_for_update(
        Deployment(metadata=evolve(STORED_META, annotations={}), spec=None), bare, subresource=""
    )
    assert same.metadata.generation == 3


@pytest.mark.parametrize(
    ("sent", "stored", "kept"),
    [
        ({"finalizers": []}, {"finalizers": ["kubernetes"]}, {"finalizers": ["kubernetes"]}),
        ({"finalizers": ["x"]}, None, None),
        (None, {"finalizers": ["kubernetes"]}, {"finalizers": ["kubernetes"]}),
        (
            {"finalizers": ["kubernetes"]},
            {"finalizers": ["kubernetes"]},
            {"finalizers": ["kubernetes"]},
        ),
    ],
)
def test_namespace_main_update_keeps_the_stored_spec_finalizers(
    sent: Any, stored: Any, kept: Any
) -> None:
    """``namespaceStrategy.PrepareForUpdate``: ``Spec.Finalizers = old.Spec.Finalizers``."""
    old = Namespace(metadata=STORED_META, spec=stored)
    new = Namespace(metadata=STORED_META, spec=sent)
    assert strategy.prepare_for_update(new, old, subresource="").spec == kept
