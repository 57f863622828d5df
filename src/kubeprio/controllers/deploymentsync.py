"""What the Deployment controller writes: the new ReplicaSet, and the rollout status.

Two pure builders for ``controllers.deployment.DeploymentController``, which reads the
cluster, decides when, and writes through the ``Client``:

* :func:`new_replica_set_object`: the ReplicaSet ``getNewReplicaSet``
  (``pkg/controller/deployment/sync.go``) creates for the current template: name
  ``<deployment>-<hash>``, the ``pod-template-hash`` label added to its selector and
  template labels, the Deployment's annotations (less ``SKIPPED_ANNOTATIONS``) plus
  ``deployment.kubernetes.io/revision``, ``desired-replicas`` and ``max-replicas``,
  owned by the Deployment, and its first size (``NewRSNewReplicas``);
* :func:`rollout_status`: the status ``syncRolloutStatus``
  (``pkg/controller/deployment/progress.go``) computes: ``calculateStatus``'s counts and
  ``Available``, and the ``Progressing`` condition (``NewReplicaSetAvailable``,
  ``ReplicaSetUpdated`` keeping its transition time, ``ProgressDeadlineExceeded`` once
  the deadline passed), with upstream's messages.

Pure: no I/O, times passed in.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubeprio.api.apps import Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.controllers import deploymentutil as du
from kubeprio.controllers import podutil


def new_replica_set_object(
    deployment: Deployment, old: Sequence[ReplicaSet], template_hash: str, revision: str
) -> ReplicaSet:
    """The new ReplicaSet of ``getNewReplicaSet``, sized by ``NewRSNewReplicas``."""
    spec = deployment.spec
    assert spec is not None
    template = spec.template or PodTemplateSpec()
    template_meta = template.metadata or ObjectMeta()
    template = evolve(
        template,
        metadata=evolve(
            template_meta,
            labels={**(template_meta.labels or {}), du.POD_TEMPLATE_HASH_LABEL: template_hash},
        ),
    )
    selector = spec.selector or LabelSelector()
    selector = evolve(
        selector,
        match_labels={
            **(selector.match_labels or {}),
            du.POD_TEMPLATE_HASH_LABEL: template_hash,
        },
    )
    annotations = du.copied_annotations(deployment)
    annotations[du.REVISION_ANNOTATION] = revision
    annotations[du.DESIRED_REPLICAS_ANNOTATION] = str(du.replicas(deployment))
    annotations[du.MAX_REPLICAS_ANNOTATION] = str(
        du.replicas(deployment) + du.max_surge(deployment)
    )
    candidate = ReplicaSet(
        metadata=ObjectMeta(
            name=f"{deployment.metadata.name}-{template_hash}",
            namespace=deployment.metadata.namespace,
            labels=dict((template.metadata or ObjectMeta()).labels or {}),
            annotations=annotations,
            owner_references=(podutil.new_controller_ref(deployment),),
        ),
        spec=ReplicaSetSpec(
            replicas=0,
            min_ready_seconds=spec.min_ready_seconds,
            selector=selector,
            template=template,
        ),
    )
    count = du.new_rs_new_replicas(deployment, old, candidate)
    return evolve(candidate, spec=evolve(candidate.spec or ReplicaSetSpec(), replicas=count))


def rollout_status(
    deployment: Deployment,
    old: Sequence[ReplicaSet],
    new: ReplicaSet | None,
    *,
    now: float,
    now_text: str,
) -> DeploymentStatus:
    """``syncRolloutStatus``'s new status: counts, ``Available``, ``Progressing``."""
    status = du.calculate_status(deployment, [*old, new], new, now=now_text)
    if not du.has_progress_deadline(deployment):
        status = du.remove_condition(status, du.PROGRESSING)
    current = du.get_condition(deployment.status, du.PROGRESSING)
    complete = (status.replicas or 0) == (status.updated_replicas or 0) and (
        current is not None and current.reason == du.NEW_RS_AVAILABLE_REASON
    )
    if du.has_progress_deadline(deployment) and not complete:
        name = new.metadata.name if new is not None else None
        if du.deployment_complete(deployment, status):
            message = (
                f'ReplicaSet "{name}" has successfully progressed.'
                if name
                else (f'Deployment "{deployment.metadata.name}" has successfully progressed.')
            )
            status = du.set_condition(
                status,
                du.new_condition(
                    du.PROGRESSING, "True", du.NEW_RS_AVAILABLE_REASON, message, now_text
                ),
            )
        elif du.deployment_progressing(deployment, status):
            message = (
                f'ReplicaSet "{name}" is progressing.'
                if name
                else (f'Deployment "{deployment.metadata.name}" is progressing.')
            )
            condition = du.new_condition(
                du.PROGRESSING, "True", du.REPLICA_SET_UPDATED_REASON, message, now_text
            )
            if current is not None:
                if current.status == "True":
                    condition = evolve(condition, last_transition_time=current.last_transition_time)
                status = du.remove_condition(status, du.PROGRESSING)
            status = du.set_condition(status, condition)
        else:
            deadline = du.progress_deadline_at(deployment, status)
            if deadline is not None and deadline < now:
                message = (
                    f'ReplicaSet "{name}" has timed out progressing.'
                    if name
                    else (f'Deployment "{deployment.metadata.name}" has timed out progressing.')
                )
                status = du.set_condition(
                    status,
                    du.new_condition(
                        du.PROGRESSING, "False", du.TIMED_OUT_REASON, message, now_text
                    ),
                )
    return status
