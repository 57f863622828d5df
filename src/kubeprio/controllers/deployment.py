"""The Deployment controller: one ReplicaSet per pod template, rolled out by strategy.

Mirrors ``pkg/controller/deployment`` (``deployment_controller.go``, ``sync.go``,
``rolling.go``, ``recreate.go``, ``progress.go``):

* ``syncDeployment`` claims the ReplicaSets the selector matches (adopting orphans,
  releasing strays), finds the new ReplicaSet (template equal but for the
  ``pod-template-hash`` label) and creates it when missing: name
  ``<deployment>-<hash>``, the hash added to its selector and template labels,
  annotations ``deployment.kubernetes.io/revision``, ``desired-replicas``,
  ``max-replicas``; the Deployment's revision annotation follows.
* a change of ``spec.replicas`` alone is a scaling event (``isScalingEvent``): the
  active ReplicaSets are scaled, proportionally when several are active (``scale``).
* ``RollingUpdate`` (the default, 25% surge / 25% unavailable): scale the new
  ReplicaSet up within ``replicas + maxSurge``, then the old ones down while
  ``replicas - maxUnavailable`` stay available, unhealthy old replicas first.
  ``Recreate``: scale every old ReplicaSet to 0, wait until their pods are gone,
  then scale the new one up.
* status (``syncRolloutStatus``): replicas, updatedReplicas, readyReplicas,
  availableReplicas, unavailableReplicas, observedGeneration; ``Available``
  (``MinimumReplicasAvailable``) and ``Progressing`` (``NewReplicaSetCreated``,
  ``ReplicaSetUpdated``, ``NewReplicaSetAvailable``, ``ProgressDeadlineExceeded``), so
  ``kubectl rollout status`` works; old ReplicaSets beyond ``revisionHistoryLimit``
  (10) are deleted once the rollout completes.

* pausing (``checkPausedConditions``): ``Progressing`` turns Unknown with
  ``DeploymentPaused`` / ``DeploymentResumed``; a paused Deployment is only scaled and
  its surplus old sets cleaned up. The existing new ReplicaSet follows the Deployment's
  annotations (``kubernetes.io/change-cause``, so ``kubectl rollout history`` shows it)
  and ``minReadySeconds`` (``SetNewReplicaSetAnnotations``); ``kubectl rollout undo``
  patches the Deployment itself, so it needs nothing more here.

Left out: the ``ReplicaFailure`` condition copied from ReplicaSets. Events: ``ScalingReplicaSet``
("Scaled up replica set web-x to 3", "Scaled down replica set web-x to 1 from 3").

The new ReplicaSet object and the rollout status are built by ``controllers.deploymentsync``,
the arithmetic (hashes, surge, conditions, counts) is ``controllers.deploymentutil``.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from kubeprio.api import errors, selectors
from kubeprio.api.apps import Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers import deploymentsync as ds
from kubeprio.controllers import deploymentutil as du
from kubeprio.controllers import podutil
from kubeprio.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    Controller,
    by_controller,
    by_namespace,
    object_key,
    resolve_controller_ref,
    split_key,
)


def _created(rs: ReplicaSet) -> tuple[float, str]:
    stamp = rs.metadata.creation_timestamp
    return (parse_rfc3339(stamp) if stamp else 0.0, rs.metadata.name or "")


class DeploymentController(Controller):
    """``DeploymentController``."""

    name = "deployment-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        deployments: Informer[Deployment],
        replicasets: Informer[ReplicaSet],
        pods: Informer[Pod],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.deployments = deployments
        self.replicasets = replicasets
        self.pods = pods
        deployments.add_index(NAMESPACE_INDEX, by_namespace)
        replicasets.add_index(NAMESPACE_INDEX, by_namespace)
        replicasets.add_index(CONTROLLER_INDEX, by_controller)
        pods.add_index(CONTROLLER_INDEX, by_controller)
        deployments.add_handler(
            FuncHandler(
                on_add=self._enqueue,
                on_update=lambda _o, d: self._enqueue(d),
                on_delete=self._enqueue,
            )
        )
        replicasets.add_handler(
            FuncHandler(
                on_add=self._rs_changed,
                on_update=lambda old, new: self._rs_changed(new, old),
                on_delete=self._rs_changed,
            )
        )
        pods.add_handler(FuncHandler(on_delete=self._pod_deleted))

    # --- event handlers -----------------------------------------------------------------------

    def _enqueue(self, deployment: Deployment) -> None:
        self.queue.add(object_key(deployment))

    def _owner(self, obj: ApiObject, namespace: str) -> Deployment | None:
        return resolve_controller_ref(obj, "Deployment", self.deployments, namespace)

    def _rs_changed(self, rs: ReplicaSet, old: ReplicaSet | None = None) -> None:
        namespace = rs.metadata.namespace or ""
        for candidate in (old, rs):
            if candidate is None:
                continue
            owner = self._owner(candidate, namespace)
            if owner is not None:
                self._enqueue(owner)
        if rs.metadata.controller_ref() is None:
            for deployment in podutil.selecting(
                self.deployments.by_index(NAMESPACE_INDEX, namespace),
                rs.metadata.labels,
                lambda d: d.spec.selector if d.spec else None,
            ):
                self._enqueue(deployment)

    def _pod_deleted(self, pod: Pod) -> None:
        """``deletePod``: a Recreate rollout waits for old pods to go."""
        ref = pod.metadata.controller_ref()
        if ref is None or ref.kind != "ReplicaSet":
            return
        rs = self.replicasets.get(ref.name or "", pod.metadata.namespace)
        if rs is None or rs.metadata.uid != ref.uid:
            return
        owner = self._owner(rs, pod.metadata.namespace or "")
        if owner is not None and du.strategy(owner)["type"] == du.RECREATE:
            self._enqueue(owner)

    def event_target(self, key: str) -> ApiObject | None:
        """The Deployment of ``key``."""
        namespace, name = split_key(key)
        return self.deployments.get(name, namespace)

    # --- sync --------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """``syncDeployment``."""
        namespace, name = split_key(key)
        deployment = self.deployments.get(name, namespace)
        if deployment is None:
            return
        selector_object = deployment.spec.selector if deployment.spec else None
        try:
            selector = podutil.selector_of(selector_object)
        except selectors.SelectorError:
            return
        if selector_object is not None and selector.is_empty():
            self.recorder.event(
                deployment,
                record.EVENT_TYPE_WARNING,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            if (
                deployment.status.observed_generation if deployment.status else 0
            ) != deployment.metadata.generation:
                status = evolve(
                    deployment.status or DeploymentStatus(),
                    observed_generation=deployment.metadata.generation,
                )
                self.client.update_status(evolve(deployment, status=status))
            return
        candidates = self.replicasets.by_index(NAMESPACE_INDEX, namespace)
        sets = podutil.claim(self.client, deployment, selector, candidates)
        if deployment.metadata.deletion_timestamp:
            self._sync_status_only(deployment, sets)
            return
        paused = bool(deployment.spec.paused) if deployment.spec else False
        deployment = self._check_paused_conditions(deployment, paused=paused)
        if paused or self._is_scaling_event(deployment, sets):
            self._sync_scale(deployment, sets, paused=paused)
            return
        if du.strategy(deployment)["type"] == du.RECREATE:
            self._rollout_recreate(deployment, sets)
        else:
            self._rollout_rolling(deployment, sets)

    def _check_paused_conditions(self, deployment: Deployment, *, paused: bool) -> Deployment:
        """``checkPausedConditions``: pausing and resuming set ``Progressing`` to Unknown
        (``DeploymentPaused`` / ``DeploymentResumed``), so a resumed rollout does not time
        out on the time it spent paused; a reported timeout is left alone."""
        if not du.has_progress_deadline(deployment):
            return deployment
        current = du.get_condition(deployment.status, du.PROGRESSING)
        if current is not None and current.reason == du.TIMED_OUT_REASON:
            return deployment
        paused_reported = current is not None and current.reason == du.PAUSED_REASON
        if paused == paused_reported:
            return deployment
        reason, message = (
            (du.PAUSED_REASON, "Deployment is paused")
            if paused
            else (du.RESUMED_REASON, "Deployment is resumed")
        )
        condition = du.new_condition(
            du.PROGRESSING, "Unknown", reason, message, rfc3339(self.clock.now())
        )
        status = du.set_condition(deployment.status or DeploymentStatus(), condition)
        try:
            return self.client.update_status(evolve(deployment, status=status))
        except errors.NotFoundError:
            return deployment

    # --- new and old ReplicaSets --------------------------------------------------------------

    def _split(
        self, deployment: Deployment, sets: list[ReplicaSet]
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """``FindNewReplicaSet`` (oldest match wins) and ``FindOldReplicaSets``."""
        template = deployment.spec.template if deployment.spec else None
        ordered = sorted(sets, key=_created)
        new = next(
            (
                rs
                for rs in ordered
                if du.equal_ignore_hash(rs.spec.template if rs.spec else None, template)
            ),
            None,
        )
        old = [rs for rs in ordered if new is None or rs.metadata.uid != new.metadata.uid]
        return new, old

    def _new_replica_set(
        self, deployment: Deployment, new: ReplicaSet | None, old: list[ReplicaSet], create: bool
    ) -> tuple[Deployment, ReplicaSet | None]:
        """``getNewReplicaSet``: sync the revision annotations, or create the new set."""
        max_old = max((du.revision(rs) for rs in old), default=0)
        new_revision = str(max_old + 1)
        now = rfc3339(self.clock.now())
        if new is not None:
            # ``SetNewReplicaSetAnnotations``: the Deployment's own annotations (a
            # ``kubernetes.io/change-cause`` set after the rollout began) follow the set.
            values = du.annotations_to_copy(deployment, new)
            if du.revision(new) < max_old + 1:
                values[du.REVISION_ANNOTATION] = new_revision
                old_revision = new.metadata.annotation(du.REVISION_ANNOTATION)
                if old_revision is not None:
                    # A set found again (a rollback) keeps the revisions it had.
                    history = du.revision_history(
                        new.metadata.annotation(du.REVISION_HISTORY_ANNOTATION), old_revision
                    )
                    if history is not None:
                        values[du.REVISION_HISTORY_ANNOTATION] = history
            min_ready = (deployment.spec.min_ready_seconds if deployment.spec else None) or 0
            if values or ((new.spec.min_ready_seconds if new.spec else None) or 0) != min_ready:
                new = self._update_set(new, values, min_ready_seconds=min_ready)
            deployment = self._set_revision(deployment, str(du.revision(new)))
            if (
                du.has_progress_deadline(deployment)
                and du.get_condition(deployment.status, du.PROGRESSING) is None
            ):
                status = du.set_condition(
                    deployment.status or DeploymentStatus(),
                    du.new_condition(
                        du.PROGRESSING,
                        "True",
                        du.FOUND_NEW_RS_REASON,
                        f'Found new replica set "{new.metadata.name}"',
                        now,
                    ),
                )
                deployment = self.client.update_status(evolve(deployment, status=status))
            return deployment, new
        if not create:
            return deployment, None
        spec = deployment.spec
        assert spec is not None
        collision = deployment.status.collision_count if deployment.status else None
        template_hash = du.pod_template_hash(spec.template, collision)
        candidate = ds.new_replica_set_object(deployment, old, template_hash, new_revision)
        count = du.replicas(candidate)
        try:
            created = self.client.create(candidate)
        except errors.AlreadyExistsError:
            existing = self.client.get(
                ReplicaSet, candidate.metadata.name or "", candidate.metadata.namespace
            )
            ref = existing.metadata.controller_ref()
            if (
                ref is not None
                and ref.uid == deployment.metadata.uid
                and du.equal_ignore_hash(
                    existing.spec.template if existing.spec else None, spec.template
                )
            ):
                return deployment, existing  # ours, not yet in the cache
            # A hash collision with a set this deployment does not own: bump collisionCount.
            status = evolve(
                deployment.status or DeploymentStatus(), collision_count=(collision or 0) + 1
            )
            self.client.update_status(evolve(deployment, status=status))
            raise
        if count > 0:
            self.recorder.event(
                deployment,
                record.EVENT_TYPE_NORMAL,
                "ScalingReplicaSet",
                f"Scaled up replica set {created.metadata.name} to {count}",
            )
        deployment = self._set_revision(deployment, new_revision)
        if du.has_progress_deadline(deployment):
            status = du.set_condition(
                deployment.status or DeploymentStatus(),
                du.new_condition(
                    du.PROGRESSING,
                    "True",
                    du.NEW_REPLICA_SET_REASON,
                    f'Created new replica set "{created.metadata.name}"',
                    now,
                ),
            )
            deployment = self.client.update_status(evolve(deployment, status=status))
        return deployment, created

    def _update_set(self, rs: ReplicaSet, annotations: dict[str, str], **spec: Any) -> ReplicaSet:
        """Read ``rs`` again and write it with ``annotations`` laid over its own and ``spec``'s
        fields changed (``getNewReplicaSet``'s update of the new set: annotations and
        ``minReadySeconds``; ``scaleReplicaSet``: the replica annotations and ``replicas``)."""
        current = self.client.get(ReplicaSet, rs.metadata.name or "", rs.metadata.namespace)
        merged = {**(current.metadata.annotations or {}), **annotations}
        return self.client.update(
            evolve(
                current,
                metadata=evolve(current.metadata, annotations=merged),
                spec=evolve(current.spec or ReplicaSetSpec(), **spec),
            )
        )

    def _set_revision(self, deployment: Deployment, revision: str) -> Deployment:
        if deployment.metadata.annotation(du.REVISION_ANNOTATION) == revision:
            return deployment
        annotations = {**(deployment.metadata.annotations or {}), du.REVISION_ANNOTATION: revision}
        # Through /status, as upstream's getNewReplicaSet: deploymentStatusStrategy stores
        # the annotations, and a status write does not bump the generation (a main update
        # that changes annotations does).
        return self.client.update_status(
            evolve(
                deployment,
                metadata=evolve(deployment.metadata, annotations=annotations),
            )
        )

    def _scale(
        self, rs: ReplicaSet, size: int, deployment: Deployment, operation: str | None = None
    ) -> tuple[bool, ReplicaSet]:
        """``scaleReplicaSetAndRecordEvent`` / ``scaleReplicaSet``."""
        old_size = du.replicas(rs)
        surge_total = du.replicas(deployment) + du.max_surge(deployment)
        wanted = {
            du.DESIRED_REPLICAS_ANNOTATION: str(du.replicas(deployment)),
            du.MAX_REPLICAS_ANNOTATION: str(surge_total),
        }
        annotations = dict(rs.metadata.annotations or {})
        needs_annotations = any(annotations.get(k) != v for k, v in wanted.items())
        if old_size == size and not needs_annotations:
            return False, rs
        operation = operation or ("up" if old_size < size else "down")
        updated = self._update_set(rs, wanted, replicas=size)
        if old_size != size:
            self.recorder.event(
                deployment,
                record.EVENT_TYPE_NORMAL,
                "ScalingReplicaSet",
                f"Scaled {operation} replica set {rs.metadata.name} to {size} from {old_size}",
            )
        return old_size != size, updated

    # --- scaling --------------------------------------------------------------------------------

    def _is_scaling_event(self, deployment: Deployment, sets: list[ReplicaSet]) -> bool:
        for rs in sets:
            if du.replicas(rs) == 0:
                continue
            desired = du.annotation_int(rs, du.DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired != du.replicas(deployment):
                return True
        return False

    def _sync_scale(self, deployment: Deployment, sets: list[ReplicaSet], *, paused: bool) -> None:
        """``sync``: scale, clean up old sets when paused, then report status."""
        new, old = self._split(deployment, sets)
        deployment, new = self._new_replica_set(deployment, new, old, create=False)
        self._scale_sets(deployment, new, old)
        if paused:
            self._cleanup(deployment, old)
        self._sync_status_only(deployment, sets)

    def _scale_sets(
        self, deployment: Deployment, new: ReplicaSet | None, old: list[ReplicaSet]
    ) -> None:
        """``scale``: the only active set takes it all; otherwise proportional scaling."""
        active = [rs for rs in ([new] if new else []) + old if du.replicas(rs) > 0]
        desired = du.replicas(deployment)
        if len(active) <= 1:
            target = active[0] if active else (new or (max(old, key=_created) if old else None))
            if target is not None and du.replicas(target) != desired:
                self._scale(target, desired, deployment)
            return
        if du.is_saturated(deployment, new):
            for rs in old:
                if du.replicas(rs) > 0:
                    self._scale(rs, 0, deployment)
            return
        sizes, operation = du.proportional_sizes(deployment, active)
        for rs, size in sizes:
            self._scale(rs, size, deployment, operation)

    # --- rollouts --------------------------------------------------------------------------------

    def _rollout_rolling(self, deployment: Deployment, sets: list[ReplicaSet]) -> None:
        """``rolloutRolling``."""
        new, old = self._split(deployment, sets)
        deployment, new = self._new_replica_set(deployment, new, old, create=True)
        assert new is not None
        all_sets = [*old, new]
        scaled, new = self._reconcile_new(deployment, all_sets, new)
        all_sets = [*old, new]
        if not scaled:
            self._reconcile_old(
                deployment, all_sets, [rs for rs in old if du.replicas(rs) > 0], new
            )
        self._sync_rollout_status(deployment, old, new)

    def _reconcile_new(
        self, deployment: Deployment, all_sets: list[ReplicaSet], new: ReplicaSet
    ) -> tuple[bool, ReplicaSet]:
        desired = du.replicas(deployment)
        if du.replicas(new) == desired:
            return False, new
        if du.replicas(new) > desired:
            return self._scale(new, desired, deployment)
        return self._scale(new, du.new_rs_new_replicas(deployment, all_sets, new), deployment)

    def _reconcile_old(
        self,
        deployment: Deployment,
        all_sets: list[ReplicaSet],
        old: list[ReplicaSet],
        new: ReplicaSet,
    ) -> bool:
        """``reconcileOldReplicaSets``: unhealthy old replicas first, then by availability."""
        if du.total_spec_replicas(old) == 0:
            return False
        min_available = du.replicas(deployment) - du.max_unavailable(deployment)
        new_unavailable = du.replicas(new) - (
            (new.status.available_replicas if new.status else 0) or 0
        )
        max_scaled_down = du.total_spec_replicas(all_sets) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old = sorted(old, key=_created)
        cleaned = 0
        remaining: list[ReplicaSet] = []
        for rs in old:
            if cleaned >= max_scaled_down or du.replicas(rs) == 0:
                remaining.append(rs)
                continue
            unhealthy = du.replicas(rs) - ((rs.status.available_replicas if rs.status else 0) or 0)
            if unhealthy <= 0:
                remaining.append(rs)
                continue
            down = min(max_scaled_down - cleaned, unhealthy)
            _, rs = self._scale(rs, du.replicas(rs) - down, deployment)
            cleaned += down
            remaining.append(rs)
        all_sets = [*remaining, new]
        available = du.available_replicas(all_sets)
        total_down = available - min_available
        scaled = 0
        if total_down > 0:
            for rs in sorted(remaining, key=_created):
                if scaled >= total_down:
                    break
                if du.replicas(rs) == 0:
                    continue
                down = min(du.replicas(rs), total_down - scaled)
                self._scale(rs, du.replicas(rs) - down, deployment)
                scaled += down
        return cleaned + scaled > 0

    def _rollout_recreate(self, deployment: Deployment, sets: list[ReplicaSet]) -> None:
        """``rolloutRecreate``: old sets to 0, wait for their pods, then the new set up."""
        new, old = self._split(deployment, sets)
        deployment, new = self._new_replica_set(deployment, new, old, create=False)
        scaled = False
        for rs in old:
            if du.replicas(rs) > 0:
                changed, _ = self._scale(rs, 0, deployment)
                scaled = scaled or changed
        if scaled or self._old_pods_running(new, old):
            self._sync_rollout_status(deployment, old, new)
            return
        if new is None:
            deployment, new = self._new_replica_set(deployment, None, old, create=True)
            assert new is not None
        if du.replicas(new) != du.replicas(deployment):
            _, new = self._scale(new, du.replicas(deployment), deployment)
        self._sync_rollout_status(deployment, old, new)

    def _old_pods_running(self, new: ReplicaSet | None, old: list[ReplicaSet]) -> bool:
        """``oldPodsRunning``."""
        if du.actual_replicas(old) > 0:
            return True
        for rs in old:
            if new is not None and rs.metadata.uid == new.metadata.uid:
                continue
            for pod in self.pods.by_index(CONTROLLER_INDEX, rs.metadata.uid or ""):
                if podutil.phase(pod) not in (PHASE_FAILED, PHASE_SUCCEEDED):
                    return True
        return False

    # --- status --------------------------------------------------------------------------------

    def _sync_status_only(self, deployment: Deployment, sets: list[ReplicaSet]) -> None:
        new, old = self._split(deployment, sets)
        self._write_status(
            deployment,
            du.calculate_status(deployment, [*old, new], new, now=rfc3339(self.clock.now())),
        )

    def _sync_rollout_status(
        self, deployment: Deployment, old: list[ReplicaSet], new: ReplicaSet | None
    ) -> None:
        """``syncRolloutStatus``: counts, ``Available``, ``Progressing``; cleanup when done."""
        now = self.clock.now()
        status = ds.rollout_status(deployment, old, new, now=now, now_text=rfc3339(now))
        if du.deployment_complete(deployment, status):
            self._cleanup(deployment, old)
        self._write_status(deployment, status)

    def _write_status(self, deployment: Deployment, status: DeploymentStatus) -> None:
        if status != (deployment.status or DeploymentStatus()):
            try:
                deployment = self.client.update_status(evolve(deployment, status=status))
            except errors.NotFoundError:
                return
        deadline = du.progress_deadline_at(deployment, status)
        if deadline is not None and not du.deployment_complete(deployment, status):
            # ``requeueStuckDeployment``: look again when the deadline passes.
            self.queue.add_after(object_key(deployment), deadline - self.clock.now() + 1)

    def _cleanup(self, deployment: Deployment, old: list[ReplicaSet]) -> None:
        """``cleanupDeployment``: keep ``revisionHistoryLimit`` old sets with no replicas."""
        limit = deployment.spec.revision_history_limit if deployment.spec else None
        limit = du.DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit
        alive = [rs for rs in old if not rs.metadata.deletion_timestamp]
        excess = len(alive) - limit
        if excess <= 0:
            return
        for rs in sorted(alive, key=functools.cmp_to_key(_by_revision))[:excess]:
            status = rs.status
            if du.replicas(rs) != 0 or ((status.replicas if status else 0) or 0) != 0:
                continue
            if (status.observed_generation if status else 0) != rs.metadata.generation:
                continue
            try:
                self.client.delete(ReplicaSet, rs.metadata.name or "", rs.metadata.namespace)
            except errors.NotFoundError:
                continue


def _by_revision(a: ReplicaSet, b: ReplicaSet) -> int:
    """``ReplicaSetsByRevision``: older revision first, then creation."""
    ra, rb = du.revision(a), du.revision(b)
    if ra != rb:
        return -1 if ra < rb else 1
    ca, cb = _created(a), _created(b)
    return -1 if ca < cb else (1 if ca > cb else 0)
