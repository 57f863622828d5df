"""The ReplicaSet controller: keep ``spec.replicas`` active pods from the template.

Mirrors ``pkg/controller/replicaset/replica_set.go``:

* ``syncReplicaSet``: claim the active pods of the namespace (adopt orphans matching
  the selector, release owned pods that stopped matching), then, if the expectations
  are satisfied and the ReplicaSet is not being deleted, ``manageReplicas``;
* ``manageReplicas``: too few pods -> create the missing ones (``generateName``
  ``<rs>-``, the template's labels, annotations and finalizers, a controller owner
  reference) in slow-start batches of 1, 2, 4...; too many -> delete the ones
  ``getPodsToDelete`` ranks first (``controllers.activepods``); at most 500 either way
  per sync. A deleted or preempted pod is therefore replaced: the replacement goes back
  through the scheduler's queue;
* ``calculateStatus``: replicas, fullyLabeledReplicas, readyReplicas,
  availableReplicas (ready for ``minReadySeconds``), observedGeneration, and a
  ``ReplicaFailure`` condition while creates or deletes fail.

Upstream runs this same controller for ReplicationControllers
(``pkg/controller/replication`` adapts the kind to the ReplicaSet's ``NewBaseController``
with another GroupVersionKind, event source and queue name): here :class:`ReplicaManager`
is the controller, generic over the owning kind, with only the kind's name, its selector
(a ReplicationController's is a label map) and its empty status left to the subclasses
:class:`ReplicaSetController` and ``controllers.replication.ReplicationManager``.

Events: ``SuccessfulCreate`` ("Created pod: <name>"), ``SuccessfulDelete``
("Deleted pod: <name>"), ``FailedCreate``/``FailedDelete``. Driven through
``controllers.base``; sees pods and owners through informers.
"""

from __future__ import annotations

import abc
import random
from typing import Any, ClassVar, Final, Generic, TypeVar

from kubeprio.api import errors, selectors
from kubeprio.api.apps import ReplicaSet, ReplicaSetStatus, WorkloadCondition
from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject, LabelSelector, ObjectMeta, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers import podutil
from kubeprio.controllers.activepods import pods_to_delete
from kubeprio.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    Controller,
    Expectations,
    by_controller,
    by_namespace,
    object_key,
    resolve_controller_ref,
    split_key,
)

REPLICA_FAILURE: Final = "ReplicaFailure"

R = TypeVar("R", ReplicaSet, ReplicationController)
"""The owning kind: a ReplicaSet or a ReplicationController."""


class ReplicaManager(Controller, Generic[R]):
    """``ReplicaSetController`` (upstream's type), over the owning kind ``R``."""

    owner_kind: ClassVar[str]
    """The kind a pod's controller reference must name."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        owners: Informer[R],
        recorder: record.EventRecorder | None = None,
        burst_replicas: int = podutil.MAX_POD_CREATE_DELETE_PER_SYNC,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.pods = pods
        self.owners: Informer[R] = owners
        self.burst_replicas = burst_replicas
        self.expectations = Expectations(clock)
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        pods.add_index(CONTROLLER_INDEX, by_controller)
        owners.add_index(NAMESPACE_INDEX, by_namespace)
        owners.add_handler(
            FuncHandler(
                on_add=self._enqueue,
                on_update=lambda _o, rs: self._enqueue(rs),
                on_delete=self._rs_deleted,
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted
            )
        )

    # --- what differs between the kinds ---------------------------------------------------

    @staticmethod
    @abc.abstractmethod
    def selector_of(owner: R) -> LabelSelector | None:
        """The owner's selector as a ``LabelSelector``."""

    @staticmethod
    @abc.abstractmethod
    def empty_status() -> Any:
        """The owner kind's status with nothing observed yet."""

    # --- event handlers ----------------------------------------------------------------------

    def _enqueue(self, rs: R) -> None:
        self.queue.add(object_key(rs))

    def _rs_deleted(self, rs: R) -> None:
        key = object_key(rs)
        self.expectations.delete(key)
        self.queue.add(key)

    def _owner(self, pod: Pod) -> R | None:
        """``resolveControllerRef``: the ReplicaSet controlling ``pod``, if it exists."""
        return resolve_controller_ref(pod, self.owner_kind, self.owners)

    def _matching(self, pod: Pod) -> list[R]:
        """``getPodReplicaSets``: ReplicaSets whose selector matches an orphan."""
        return podutil.selecting(
            self.owners.by_index(NAMESPACE_INDEX, pod.metadata.namespace or ""),
            pod.metadata.labels,
            self.selector_of,
        )

    def _pod_added(self, pod: Pod) -> None:
        if pod.metadata.deletion_timestamp:
            self._pod_deleted(pod)
            return
        owner = self._owner(pod)
        if owner is not None:
            key = object_key(owner)
            self.expectations.creation_observed(key)
            self.queue.add(key)
            return
        if pod.metadata.controller_ref() is None:
            for rs in self._matching(pod):
                self.queue.add(object_key(rs))

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        labels_changed = old.metadata.labels != new.metadata.labels
        if new.metadata.deletion_timestamp:
            self._pod_deleted(new)
            if labels_changed:
                self._pod_deleted(old)
            return
        old_ref: OwnerReference | None = old.metadata.controller_ref()
        new_ref: OwnerReference | None = new.metadata.controller_ref()
        if old_ref != new_ref and old_ref is not None:
            previous = self._owner(old)
            if previous is not None:
                self.queue.add(object_key(previous))
        owner = self._owner(new)
        if owner is not None:
            key = object_key(owner)
            self.queue.add(key)
            min_ready = (owner.spec.min_ready_seconds if owner.spec else None) or 0
            if min_ready and not podutil.is_pod_ready(old) and podutil.is_pod_ready(new):
                self.queue.add_after(key, min_ready + 1)
            return
        if new_ref is None and (labels_changed or old_ref != new_ref):
            for rs in self._matching(new):
                self.queue.add(object_key(rs))

    def _pod_deleted(self, pod: Pod) -> None:
        owner = self._owner(pod)
        if owner is None:
            return
        key = object_key(owner)
        self.expectations.deletion_observed(key, object_key(pod))
        self.queue.add(key)

    # --- sync ----------------------------------------------------------------------------------

    def event_target(self, key: str) -> ApiObject | None:
        """The ReplicaSet of ``key``."""
        namespace, name = split_key(key)
        return self.owners.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``syncReplicaSet``."""
        namespace, name = split_key(key)
        rs = self.owners.get(name, namespace)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = podutil.selector_of(self.selector_of(rs))
        except selectors.SelectorError:
            return  # upstream logs and gives up on a selector it cannot parse
        active = [
            p for p in self.pods.by_index(NAMESPACE_INDEX, namespace) if podutil.is_pod_active(p)
        ]
        owned = podutil.claim(self.client, rs, selector, active)
        failure: str | None = None
        if needs_sync and not rs.metadata.deletion_timestamp:
            failure = self.manage_replicas(key, owned, rs)
        self._update_status(key, rs, owned, failure)

    def manage_replicas(self, key: str, pods: list[Pod], rs: R) -> str | None:
        """``manageReplicas``: create or delete the difference; the first error, if any."""
        wanted = _replicas(rs)
        diff = len(pods) - wanted
        if diff < 0:
            return self._create(key, rs, min(-diff, self.burst_replicas))
        if diff > 0:
            count = min(diff, self.burst_replicas)
            victims = pods_to_delete(pods, self.related_pods(rs), count, self.clock.now())
            return self._delete(key, rs, victims)
        return None

    def related_pods(self, rs: R) -> list[Pod]:
        """``getIndirectlyRelatedPods``: pods of every ReplicaSet with the same controller."""
        owner = rs.metadata.controller_ref()
        siblings = [rs]
        if owner is not None:
            siblings = [
                other
                for other in self.owners.by_index(NAMESPACE_INDEX, rs.metadata.namespace or "")
                if (ref := other.metadata.controller_ref()) is not None and ref.uid == owner.uid
            ]
        related: list[Pod] = []
        for sibling in siblings:
            related.extend(self.pods.by_index(CONTROLLER_INDEX, sibling.metadata.uid or ""))
        return related

    def _create(self, key: str, rs: R, count: int) -> str | None:
        self.expectations.expect_creations(key, count)
        template = rs.spec.template if rs.spec else None
        prefix = podutil.pods_prefix(rs.metadata.name or "")
        remaining = count
        batch = min(count, podutil.SLOW_START_INITIAL_BATCH_SIZE)
        failure: str | None = None
        pending: WritePendingError | None = None
        while remaining > 0 and failure is None and pending is None:
            for _ in range(batch):
                pod = podutil.pod_from_template(template, rs, generate_name=prefix)
                try:
                    created = self.client.create(pod)
                except WritePendingError as exc:
                    # Waiting on a webhook (client.writepending): not created, so not
                    # expected; the batch's other creates wait alongside, as upstream's
                    # parallel batch, and the sync is retried once the answers are in.
                    self.expectations.creation_observed(key)
                    pending = exc
                    continue
                except errors.StatusError as exc:
                    self.expectations.creation_observed(key)
                    failure = str(exc)
                    self.recorder.event(
                        rs, record.EVENT_TYPE_WARNING, "FailedCreate", f"Error creating: {exc}"
                    )
                    continue
                self.recorder.event(
                    rs,
                    record.EVENT_TYPE_NORMAL,
                    "SuccessfulCreate",
                    f"Created pod: {created.metadata.name}",
                )
            remaining -= batch
            batch = min(2 * batch, remaining)
        for _ in range(remaining if failure is not None or pending is not None else 0):
            self.expectations.creation_observed(key)  # skipped by the slow start
        if pending is not None:
            raise pending
        return failure

    def _delete(self, key: str, rs: R, victims: list[Pod]) -> str | None:
        self.expectations.expect_deletions(key, [object_key(p) for p in victims])
        failure: str | None = None
        pending: WritePendingError | None = None
        for pod in victims:
            try:
                self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace)
            except WritePendingError as exc:
                self.expectations.deletion_observed(key, object_key(pod))
                pending = exc
                continue
            except errors.NotFoundError:
                self.expectations.deletion_observed(key, object_key(pod))
                continue
            except errors.StatusError as exc:
                self.expectations.deletion_observed(key, object_key(pod))
                failure = failure or str(exc)
                self.recorder.event(
                    rs, record.EVENT_TYPE_WARNING, "FailedDelete", f"Error deleting: {exc}"
                )
                continue
            self.recorder.event(
                rs,
                record.EVENT_TYPE_NORMAL,
                "SuccessfulDelete",
                f"Deleted pod: {pod.metadata.name}",
            )
        if pending is not None:
            raise pending
        return failure

    def calculate_status(self, rs: R, pods: list[Pod], failure: str | None) -> Any:
        """``calculateStatus`` (the owner kind's status)."""
        old = rs.status or self.empty_status()
        template_labels = dict(
            ((rs.spec.template.metadata if rs.spec and rs.spec.template else None) or _EMPTY).labels
            or {}
        )
        min_ready = (rs.spec.min_ready_seconds if rs.spec else None) or 0
        now = self.clock.now()
        fully_labeled = ready = available = 0
        for pod in pods:
            labels = pod.metadata.labels or {}
            if all(labels.get(k) == v for k, v in template_labels.items()):
                fully_labeled += 1
            if podutil.is_pod_ready(pod):
                ready += 1
                if podutil.is_pod_available(pod, min_ready, now):
                    available += 1
        conditions = [c for c in old.conditions or ()]
        has_failure = any(c.type == REPLICA_FAILURE for c in conditions)
        if failure is not None and not has_failure:
            reason = "FailedCreate" if len(pods) < _replicas(rs) else "FailedDelete"
            stamp = rfc3339(now)
            conditions.append(
                WorkloadCondition(
                    type=REPLICA_FAILURE,
                    status="True",
                    last_transition_time=stamp,
                    reason=reason,
                    message=failure,
                )
            )
        elif failure is None and has_failure:
            conditions = [c for c in conditions if c.type != REPLICA_FAILURE]
        return evolve(
            old,
            replicas=len(pods),
            fully_labeled_replicas=fully_labeled,
            ready_replicas=ready,
            available_replicas=available,
            observed_generation=rs.metadata.generation,
            conditions=tuple(conditions) or None,
        )

    def _update_status(self, key: str, rs: R, pods: list[Pod], failure: str | None) -> None:
        status = self.calculate_status(rs, pods, failure)
        if status != (rs.status or self.empty_status()):
            try:
                self.client.update_status(evolve(rs, status=status))
            except errors.NotFoundError:
                return
        min_ready = (rs.spec.min_ready_seconds if rs.spec else None) or 0
        wanted = _replicas(rs)
        if (
            failure is None
            and min_ready > 0
            and status.ready_replicas == wanted
            and status.available_replicas != wanted
        ):
            self.queue.add_after(key, float(min_ready))


_EMPTY: Final = ObjectMeta()


def _replicas(rs: ReplicaSet | ReplicationController) -> int:
    """``spec.replicas``; the API defaults an unset value to 1."""
    value = rs.spec.replicas if rs.spec else None
    return 1 if value is None else value


class ReplicaSetController(ReplicaManager[ReplicaSet]):
    """The ReplicaSet controller."""

    name = "replicaset-controller"
    owner_kind = "ReplicaSet"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        replicasets: Informer[ReplicaSet],
        recorder: record.EventRecorder | None = None,
        burst_replicas: int = podutil.MAX_POD_CREATE_DELETE_PER_SYNC,
    ) -> None:
        super().__init__(
            client,
            clock=clock,
            rng=rng,
            pods=pods,
            owners=replicasets,
            recorder=recorder,
            burst_replicas=burst_replicas,
        )

    @staticmethod
    def selector_of(owner: ReplicaSet) -> LabelSelector | None:
        """``spec.selector``."""
        return owner.spec.selector if owner.spec else None

    @staticmethod
    def empty_status() -> ReplicaSetStatus:
        """An empty ``ReplicaSetStatus``."""
        return ReplicaSetStatus()
