"""The ReplicaSet controller: keep ``spec.replicas`` active pods from the template.

Mirrors ``pkg/controller/replicaset/replica_set.go``:

* ``syncReplicaSet``: claim the active pods of the namespace (adopt orphans matching
  the selector, release owned pods that stopped matching), then, if the expectations
  are satisfied and the ReplicaSet is not being deleted, ``manageReplicas``;
* ``manageReplicas``: too few pods -> create the missing ones (``generateName``
  ``<rs>-``, the template's labels, annotations and finalizers, a controller owner
  reference) in slow-start batches of 1, 2, 4...; too many -> delete the ones
  ``getPodsToDelete`` ranks first; at most 500 either way per sync. A deleted or
  preempted pod is therefore replaced: the replacement goes back through the
  scheduler's queue;
* ``calculateStatus``: replicas, fullyLabeledReplicas, readyReplicas,
  availableReplicas (ready for ``minReadySeconds``), observedGeneration, and a
  ``ReplicaFailure`` condition while creates or deletes fail.

Which pods go first on scale-down (``ActivePodsWithRanks``): unassigned before
assigned; Pending before Unknown before Running; not ready before ready; lower
``controller.kubernetes.io/pod-deletion-cost`` first; more active pods of the same
controller(s) on its node first; ready for less time first, then more restarts,
then newer (times compared on a log2 scale, ties by UID).

Events: ``SuccessfulCreate`` ("Created pod: <name>"), ``SuccessfulDelete``
("Deleted pod: <name>"), ``FailedCreate``/``FailedDelete``. Driven through
``controllers.base``; sees pods and ReplicaSets through informers.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors, selectors
from kubeprio.api.apps import ReplicaSet, ReplicaSetStatus, WorkloadCondition
from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers import podutil
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
_PHASE_ORDINAL: Final = {"Pending": 0, "Unknown": 1, "Running": 2}


def _time(text: str | None) -> float | None:
    return parse_rfc3339(text) if text else None


def _log_rank(at: float, now: float) -> int:
    """``logarithmicRankDiff`` operand: floor(log2(age in ns)), -1 for no age."""
    age = (now - at) * 1e9
    return int(math.log2(age)) if age > 0 else -1


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    """``afterOrZero``: a missing time sorts first, then the later one."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _max_restarts(pod: Pod) -> int:
    statuses = (pod.status.container_statuses if pod.status else None) or ()
    return max((c.restart_count or 0 for c in statuses), default=0)


def pod_deletion_less(p1: Pod, p2: Pod, rank1: int, rank2: int, now: float) -> bool:
    """``ActivePodsWithRanks.Less``: whether ``p1`` should be deleted before ``p2``."""
    n1 = (p1.spec.node_name if p1.spec else None) or ""
    n2 = (p2.spec.node_name if p2.spec else None) or ""
    if n1 != n2 and (not n1 or not n2):
        return not n1
    o1 = _PHASE_ORDINAL.get(podutil.phase(p1), 0)
    o2 = _PHASE_ORDINAL.get(podutil.phase(p2), 0)
    if o1 != o2:
        return o1 < o2
    ready1, ready2 = podutil.is_pod_ready(p1), podutil.is_pod_ready(p2)
    if ready1 != ready2:
        return not ready1
    cost1, cost2 = podutil.deletion_cost(p1), podutil.deletion_cost(p2)
    if cost1 != cost2:
        return cost1 < cost2
    if rank1 != rank2:
        return rank1 > rank2
    uid1, uid2 = p1.metadata.uid or "", p2.metadata.uid or ""
    if ready1 and ready2:
        r1 = _time(podutil.ready_condition_time(p1))
        r2 = _time(podutil.ready_condition_time(p2))
        if r1 != r2:
            if r1 is None or r2 is None:
                return _after_or_zero(r1, r2)
            diff = _log_rank(r1, now) - _log_rank(r2, now)
            if diff == 0:
                return uid1 < uid2
            return diff < 0
    restarts1, restarts2 = _max_restarts(p1), _max_restarts(p2)
    if restarts1 != restarts2:
        return restarts1 > restarts2
    c1, c2 = _time(p1.metadata.creation_timestamp), _time(p2.metadata.creation_timestamp)
    if c1 != c2:
        if c1 is None or c2 is None:
            return _after_or_zero(c1, c2)
        diff = _log_rank(c1, now) - _log_rank(c2, now)
        if diff == 0:
            return uid1 < uid2
        return diff < 0
    return False


def pods_to_delete(
    pods: Sequence[Pod], related: Sequence[Pod], count: int, now: float
) -> list[Pod]:
    """``getPodsToDelete``: the ``count`` pods ranked first (rank: active related pods on
    the same node, ``getPodsRankedByRelatedPodsOnSameNode``). Ties keep name order."""
    if count >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for pod in related:
        if podutil.is_pod_active(pod):
            node = (pod.spec.node_name if pod.spec else None) or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [
        (pod, on_node.get((pod.spec.node_name if pod.spec else None) or "", 0))
        for pod in sorted(pods, key=lambda p: (p.metadata.namespace or "", p.metadata.name or ""))
    ]

    def compare(a: tuple[Pod, int], b: tuple[Pod, int]) -> int:
        if pod_deletion_less(a[0], b[0], a[1], b[1], now):
            return -1
        if pod_deletion_less(b[0], a[0], b[1], a[1], now):
            return 1
        return 0

    ranked.sort(key=functools.cmp_to_key(compare))
    return [pod for pod, _ in ranked[:count]]


class ReplicaSetController(Controller):
    """``ReplicaSetController``."""

    name = "replicaset-controller"

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
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.pods = pods
        self.replicasets = replicasets
        self.burst_replicas = burst_replicas
        self.expectations = Expectations(clock)
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        pods.add_index(CONTROLLER_INDEX, by_controller)
        replicasets.add_index(NAMESPACE_INDEX, by_namespace)
        replicasets.add_handler(
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

    # --- event handlers ----------------------------------------------------------------------

    def _enqueue(self, rs: ReplicaSet) -> None:
        self.queue.add(object_key(rs))

    def _rs_deleted(self, rs: ReplicaSet) -> None:
        key = object_key(rs)
        self.expectations.delete(key)
        self.queue.add(key)

    def _owner(self, pod: Pod) -> ReplicaSet | None:
        """``resolveControllerRef``: the ReplicaSet controlling ``pod``, if it exists."""
        return resolve_controller_ref(pod, "ReplicaSet", self.replicasets)

    def _matching(self, pod: Pod) -> list[ReplicaSet]:
        """``getPodReplicaSets``: ReplicaSets whose selector matches an orphan."""
        return podutil.selecting(
            self.replicasets.by_index(NAMESPACE_INDEX, pod.metadata.namespace or ""),
            pod.metadata.labels,
            lambda rs: rs.spec.selector if rs.spec else None,
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
        old_ref, new_ref = old.metadata.controller_ref(), new.metadata.controller_ref()
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
        return self.replicasets.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``syncReplicaSet``."""
        namespace, name = split_key(key)
        rs = self.replicasets.get(name, namespace)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = podutil.selector_of(rs.spec.selector if rs.spec else None)
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

    def manage_replicas(self, key: str, pods: list[Pod], rs: ReplicaSet) -> str | None:
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

    def related_pods(self, rs: ReplicaSet) -> list[Pod]:
        """``getIndirectlyRelatedPods``: pods of every ReplicaSet with the same controller."""
        owner = rs.metadata.controller_ref()
        siblings = [rs]
        if owner is not None:
            siblings = [
                other
                for other in self.replicasets.by_index(NAMESPACE_INDEX, rs.metadata.namespace or "")
                if (ref := other.metadata.controller_ref()) is not None and ref.uid == owner.uid
            ]
        related: list[Pod] = []
        for sibling in siblings:
            related.extend(self.pods.by_index(CONTROLLER_INDEX, sibling.metadata.uid or ""))
        return related

    def _create(self, key: str, rs: ReplicaSet, count: int) -> str | None:
        self.expectations.expect_creations(key, count)
        template = rs.spec.template if rs.spec else None
        prefix = podutil.pods_prefix(rs.metadata.name or "")
        remaining = count
        batch = min(count, podutil.SLOW_START_INITIAL_BATCH_SIZE)
        failure: str | None = None
        while remaining > 0 and failure is None:
            for _ in range(batch):
                pod = podutil.pod_from_template(template, rs, generate_name=prefix)
                try:
                    created = self.client.create(pod)
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
        for _ in range(remaining if failure is not None else 0):
            self.expectations.creation_observed(key)  # skipped by the slow start
        return failure

    def _delete(self, key: str, rs: ReplicaSet, victims: list[Pod]) -> str | None:
        self.expectations.expect_deletions(key, [object_key(p) for p in victims])
        failure: str | None = None
        for pod in victims:
            try:
                self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace)
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
        return failure

    def calculate_status(
        self, rs: ReplicaSet, pods: list[Pod], failure: str | None
    ) -> ReplicaSetStatus:
        """``calculateStatus``."""
        old = rs.status or ReplicaSetStatus()
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

    def _update_status(
        self, key: str, rs: ReplicaSet, pods: list[Pod], failure: str | None
    ) -> None:
        status = self.calculate_status(rs, pods, failure)
        if status != (rs.status or ReplicaSetStatus()):
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


def _replicas(rs: ReplicaSet) -> int:
    """``spec.replicas``; the API defaults an unset value to 1."""
    value = rs.spec.replicas if rs.spec else None
    return 1 if value is None else value
