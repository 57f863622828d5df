"""The StatefulSet controller: pods ``<set>-<ordinal>`` with stable identities, in order.

Mirrors ``pkg/controller/statefulset/stateful_set.go`` (the event handlers, ``sync``,
``getPodsForStatefulSet``, ``adoptOrphanRevisions``), ``stateful_set_control.go``
(``UpdateStatefulSet``, ``getStatefulSetRevisions``, ``updateStatefulSet``,
``processReplica``, ``processCondemned``, ``truncateHistory``,
``updateStatefulSetStatus``), ``stateful_pod_control.go`` (the pod writes and their
events) and ``stateful_set_status_updater.go``; the pure rules are in
``controllers.statefulsetutil``. A sync:

1. claims the ControllerRevisions and the pods the selector matches (a pod only if its
   name says it belongs to the set, ``isMemberOf``), adopting orphans, releasing strays;
2. finds the update revision (the template now: an equal old revision is reused or moved
   up, as a rollback; otherwise a new one ``<set>-<hash>`` is created, a clash with
   another template bumping ``collisionCount``) and the current revision
   (``status.currentRevision``, or the update revision at first);
3. sorts the pods into replicas (ordinals ``start .. start + replicas - 1``) and
   condemned (the rest), and makes each missing replica at the current revision below the
   partition and the update revision from it;
4. walks the replicas in ordinal order: a Failed or Succeeded pod is deleted (it is made
   anew once gone: a preempted or evicted pod comes back with the same name), a missing
   one created. With ``OrderedReady`` the walk stops at the first pod created, terminating,
   or not Running and Ready and available, so pod N+1 never exists before pod N is
   ready; with ``Parallel`` it goes on (slow-start batches 1, 2, 4, ...);
5. deletes condemned pods from the highest ordinal, one at a time with ``OrderedReady``
   (only once the others are healthy), all at once with ``Parallel``;
6. with ``RollingUpdate``, deletes the highest-ordinal pod at or above the partition that
   is not at the update revision, once every higher one is available again; ``OnDelete``
   does nothing more;
7. writes the status when it changed (``replicas``, ``readyReplicas``,
   ``currentReplicas``, ``updatedReplicas``, ``availableReplicas``, the revisions,
   ``observedGeneration``, ``collisionCount``; the update revision becomes the current one
   when every pod is updated and ready) and deletes old revisions beyond
   ``revisionHistoryLimit`` that no pod uses.

The writes and their events are ``controllers.statefulpodcontrol``'s
(``StatefulPodControl``): ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web
successful", ``FailedCreate``, ``SuccessfulDelete``, ``FailedDelete``, ``SuccessfulUpdate``,
``FailedUpdate``; before a pod is created its missing claims are made from
``volumeClaimTemplates`` ("create Claim www-web-0 Pod web-0 in StatefulSet web success"),
and a claim being deleted, or one the API refuses, holds the pod back. The claims' owner
references follow ``persistentVolumeClaimRetentionPolicy`` (``processReplica``'s
``retentionMatch``, and the ``fixPodClaim`` pass over condemned pods before scale-down);
a pod whose claim an earlier pod of its name still owns waits (``PodClaimIsStale``). Event-driven on StatefulSet and pod events; pods and revisions
are found through the informer indexes the workload controllers share (the set's own, and
the orphans its selector could match: ``base.claim_candidates``), never by scanning. Driven through ``controllers.base``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kubeprio.api import errors, selectors
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.statefulset import (
    ON_DELETE,
    StatefulSet,
    StatefulSetStatus,
    replicas,
    start_ordinal,
    update_strategy,
)
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers import podutil
from kubeprio.controllers import statefulsetutil as util
from kubeprio.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    by_controller,
    by_namespace,
    by_orphan_labels,
    claim_candidates,
    object_key,
    resolve_controller_ref,
    split_key,
)
from kubeprio.controllers.statefulpodcontrol import StatefulPodControl
from kubeprio.errors import KubeprioError

DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
STATUS_UPDATE_ATTEMPTS: Final = 5
"""``retry.DefaultRetry.Steps``: ``UpdateStatefulSetStatus``'s conflict retries."""


@dataclass
class _Sync:
    """One pass of ``updateStatefulSet``: the set, its revisions and the status so far."""

    sts: StatefulSet
    current_set: StatefulSet
    update_set: StatefulSet
    current_revision: str
    update_revision: str
    status: StatefulSetStatus
    replicas: list[Pod] = field(default_factory=list)
    condemned: list[Pod] = field(default_factory=list)


class StatefulSetController(Controller):
    """``StatefulSetController`` with ``defaultStatefulSetControl``."""

    name = "statefulset-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        statefulsets: Informer[StatefulSet],
        revisions: Informer[ControllerRevision],
        pods: Informer[Pod],
        claims: Informer[PersistentVolumeClaim],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.statefulsets = statefulsets
        self.revisions = revisions
        self.pods = pods
        self.control = StatefulPodControl(client, self.recorder, claims)
        statefulsets.add_index(NAMESPACE_INDEX, by_namespace)
        for informer in (pods, revisions):
            informer.add_index(CONTROLLER_INDEX, by_controller)
            informer.add_index(ORPHAN_INDEX, by_orphan_labels)
        statefulsets.add_handler(
            FuncHandler(
                on_add=self._enqueue,
                on_update=lambda _old, new: self._enqueue(new),
                on_delete=self._enqueue,
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted
            )
        )

    # --- event handlers ----------------------------------------------------------------------

    def _enqueue(self, sts: StatefulSet) -> None:
        self.queue.add(object_key(sts))

    def _owner(self, pod: Pod) -> StatefulSet | None:
        return resolve_controller_ref(pod, "StatefulSet", self.statefulsets)

    def _selecting(self, pod: Pod) -> list[StatefulSet]:
        """``getPodStatefulSets``: the sets whose selector matches an orphan's labels."""
        return podutil.selecting(
            self.statefulsets.by_index(NAMESPACE_INDEX, pod.metadata.namespace or ""),
            pod.metadata.labels,
            lambda sts: sts.spec.selector if sts.spec else None,
        )

    def _pod_added(self, pod: Pod) -> None:
        """``addPod``."""
        if pod.metadata.deletion_timestamp:
            self._pod_deleted(pod)
            return
        if pod.metadata.controller_ref() is not None:
            owner = self._owner(pod)
            if owner is not None:
                self._enqueue(owner)
            return
        for sts in self._selecting(pod):
            self._enqueue(sts)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        """``updatePod``: the old owner and the new; a pod turning Ready with
        ``minReadySeconds`` is looked at again once it can be available."""
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        old_ref: OwnerReference | None = old.metadata.controller_ref()
        new_ref: OwnerReference | None = new.metadata.controller_ref()
        if old_ref != new_ref and old_ref is not None:
            previous = self._owner(old)
            if previous is not None:
                self._enqueue(previous)
        if new_ref is not None:
            owner = self._owner(new)
            if owner is None:
                return
            self._enqueue(owner)
            min_ready = (owner.spec.min_ready_seconds if owner.spec else None) or 0
            if min_ready and not podutil.is_pod_ready(old) and podutil.is_pod_ready(new):
                self.queue.add_after(object_key(owner), float(min_ready))
            return
        if old.metadata.labels != new.metadata.labels or old_ref != new_ref:
            for sts in self._selecting(new):
                self._enqueue(sts)

    def _pod_deleted(self, pod: Pod) -> None:
        """``deletePod``."""
        owner = self._owner(pod)
        if owner is not None:
            self._enqueue(owner)

    # --- sync ----------------------------------------------------------------------------------

    def event_target(self, key: str) -> ApiObject | None:
        """The StatefulSet of ``key``."""
        namespace, name = split_key(key)
        return self.statefulsets.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``sync`` and ``syncStatefulSet``."""
        namespace, name = split_key(key)
        sts = self.statefulsets.get(name, namespace)
        if sts is None:
            return
        spec_selector = sts.spec.selector if sts.spec else None
        try:
            selector = podutil.selector_of(spec_selector)
        except selectors.SelectorError:
            return  # non-transient: upstream logs it and does not retry
        revisions = podutil.claim(
            self.client, sts, selector, claim_candidates(self.revisions, sts, spec_selector)
        )
        members = [
            pod
            for pod in claim_candidates(self.pods, sts, spec_selector)
            if util.is_member_of(sts, pod)
        ]
        pods = podutil.claim(self.client, sts, selector, members)
        status = self._update_stateful_set(sts, pods, revisions)
        min_ready = (sts.spec.min_ready_seconds if sts.spec else None) or 0
        if min_ready > 0 and (status.available_replicas or 0) != replicas(sts):
            self.queue.add_after(key, float(min_ready))

    def _update_stateful_set(
        self, sts: StatefulSet, pods: list[Pod], revisions: list[ControllerRevision]
    ) -> StatefulSetStatus:
        """``UpdateStatefulSet``: ``performUpdate``, then ``truncateHistory`` (also after a
        failure, whose error is raised once the history is trimmed)."""
        revisions = sorted(revisions, key=util.sort_key)
        current, update, collisions = self._revisions(sts, revisions)
        failure: KubeprioError | None = None
        status = StatefulSetStatus()
        try:
            status = self._perform_update(sts, pods, current, update, collisions)
        except KubeprioError as exc:
            failure = exc
        self._truncate_history(sts, pods, revisions, current, update)
        if failure is not None:
            raise failure
        return status

    def _perform_update(
        self,
        sts: StatefulSet,
        pods: list[Pod],
        current: ControllerRevision,
        update: ControllerRevision,
        collisions: int,
    ) -> StatefulSetStatus:
        """``performUpdate``: the pod work, then the status (written even after a failure)."""
        sync = _Sync(
            sts=sts,
            current_set=util.apply_revision(sts, current),
            update_set=util.apply_revision(sts, update),
            current_revision=current.metadata.name or "",
            update_revision=update.metadata.name or "",
            status=StatefulSetStatus(),
        )
        failure: KubeprioError | None = None
        try:
            self._update_pods(sync, pods, collisions)
        except KubeprioError as exc:
            failure = exc
        status = self._write_status(sts, sync.status)
        if failure is not None:
            raise failure
        return status

    # --- revisions -------------------------------------------------------------------------

    def _revisions(
        self, sts: StatefulSet, revisions: list[ControllerRevision]
    ) -> tuple[ControllerRevision, ControllerRevision, int]:
        """``getStatefulSetRevisions``: (current, update, collisionCount)."""
        collisions = (sts.status.collision_count if sts.status else None) or 0
        wanted = util.new_revision(sts, util.next_revision(revisions), collisions)
        equal = [r for r in revisions if util.equal_revision(r, wanted)]
        if equal and util.equal_revision(revisions[-1], equal[-1]):
            update = revisions[-1]
        elif equal:
            update = self._move_revision(equal[-1], wanted.revision or 0)
        else:
            update, collisions = self._create_revision(sts, wanted, collisions)
        current_name = (sts.status.current_revision if sts.status else None) or ""
        current = next((r for r in revisions if r.metadata.name == current_name), update)
        return current, update, collisions

    def _move_revision(self, revision: ControllerRevision, number: int) -> ControllerRevision:
        """``UpdateControllerRevision``: a rollback moves an old revision to the top."""
        try:
            return self.client.update(evolve(revision, revision=number))
        except errors.ConflictError:
            fresh = self.client.get(
                ControllerRevision, revision.metadata.name or "", revision.metadata.namespace
            )
            return self.client.update(evolve(fresh, revision=number))

    def _create_revision(
        self, sts: StatefulSet, wanted: ControllerRevision, collisions: int
    ) -> tuple[ControllerRevision, int]:
        """``CreateControllerRevision``: a name taken by another template tries the next
        collision count until the name is free or holds the same data."""
        namespace = sts.metadata.namespace
        while True:
            name = util.revision_name(
                sts.metadata.name or "", util.revision_hash(wanted.data, collisions)
            )
            candidate = evolve(wanted, metadata=evolve(wanted.metadata, name=name))
            try:
                return self.client.create(candidate), collisions
            except errors.AlreadyExistsError:
                existing = self.client.get(ControllerRevision, name, namespace)
                if util.equal_revision(existing, candidate):
                    return existing, collisions
                collisions += 1

    def _truncate_history(
        self,
        sts: StatefulSet,
        pods: list[Pod],
        revisions: list[ControllerRevision],
        current: ControllerRevision,
        update: ControllerRevision,
    ) -> None:
        """``truncateHistory``: delete the oldest revisions no pod and no status names, down
        to ``revisionHistoryLimit`` (a negative limit keeps everything)."""
        live = {current.metadata.name, update.metadata.name, *map(util.pod_revision, pods)}
        history = [r for r in revisions if r.metadata.name not in live]
        limit = sts.spec.revision_history_limit if sts.spec else None
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit
        if limit < 0 or len(history) <= limit:
            return
        for revision in history[: len(history) - limit]:
            try:
                self.client.delete(
                    ControllerRevision, revision.metadata.name or "", revision.metadata.namespace
                )
            except errors.NotFoundError:
                continue

    # --- pods ------------------------------------------------------------------------------

    def _update_pods(self, sync: _Sync, pods: list[Pod], collisions: int) -> None:
        """``updateStatefulSet``: replicas, condemned, then the rolling update."""
        sts = sync.sts
        now = self.clock.now()
        min_ready = (sts.spec.min_ready_seconds if sts.spec else None) or 0
        count = replicas(sts)
        sync.status = StatefulSetStatus(
            observed_generation=sts.metadata.generation,
            current_revision=sync.current_revision,
            update_revision=sync.update_revision,
            collision_count=collisions,
        )
        self._count(sync, pods, now)
        start = start_ordinal(sts)
        slots: list[Pod | None] = [None] * count
        for pod in pods:
            if util.in_ordinal_range(sts, pod, count):
                slots[util.ordinal_of(pod) - start] = pod
            elif util.ordinal_of(pod) >= 0:
                sync.condemned.append(pod)
        sync.replicas = [
            pod
            if pod is not None
            else util.new_versioned_pod(
                sync.current_set,
                sync.update_set,
                sync.current_revision,
                sync.update_revision,
                start + position,
            )
            for position, pod in enumerate(slots)
        ]
        sync.condemned.sort(key=util.ordinal_of, reverse=True)
        first_unavailable = next(
            (p for p in sync.replicas if util.is_unavailable(p, min_ready, now)), None
        )
        if first_unavailable is None:
            first_unavailable = next(
                (p for p in reversed(sync.condemned) if util.is_unavailable(p, min_ready, now)),
                None,
            )
        if sts.metadata.deletion_timestamp:
            return
        monotonic = not util.allows_burst(sts)
        try:
            if self._run_for_all(
                sync.replicas,
                lambda i: self._process_replica(sync, monotonic, i, min_ready, now),
                monotonic,
            ):
                return
            if self._run_for_all(
                sync.condemned, lambda i: self._fix_condemned_claims(sync, i), monotonic
            ):
                return
            if self._run_for_all(
                sync.condemned,
                lambda i: self._process_condemned(
                    sync, first_unavailable, monotonic, i, min_ready, now
                ),
                monotonic,
            ):
                return
        finally:
            self._count(sync, [*sync.replicas, *sync.condemned], now)
        if update_strategy(sts).type == ON_DELETE:
            return
        self._rolling_update(sync, min_ready, now)

    def _count(self, sync: _Sync, pods: list[Pod], now: float) -> None:
        min_ready = (sync.sts.spec.min_ready_seconds if sync.sts.spec else None) or 0
        counts = util.compute_status(
            pods, min_ready, sync.current_revision, sync.update_revision, now
        )
        sync.status = evolve(
            sync.status,
            replicas=counts["replicas"],
            ready_replicas=counts["ready"] or None,
            available_replicas=counts["available"],
            current_replicas=counts["current"] or None,
            updated_replicas=counts["updated"] or None,
        )

    @staticmethod
    def _run_for_all(pods: list[Pod], fn: Callable[[int], bool], monotonic: bool) -> bool:
        """``runForAll``: in order, stopping when ``fn`` says so (monotonic); otherwise every
        pod, in slow-start batches that stop after a batch with an error (which is raised)."""
        if monotonic:
            return any(fn(i) for i in range(len(pods)))
        position, batch = 0, min(len(pods), podutil.SLOW_START_INITIAL_BATCH_SIZE)
        while batch > 0:
            failures: list[KubeprioError] = []
            for i in range(position, position + batch):
                try:
                    fn(i)
                except KubeprioError as exc:
                    failures.append(exc)
            if failures:
                raise failures[0]
            position += batch
            batch = min(2 * batch, len(pods) - position, podutil.MAX_POD_CREATE_DELETE_PER_SYNC)
        return False

    def _process_replica(
        self, sync: _Sync, monotonic: bool, i: int, min_ready: int, now: float
    ) -> bool:
        """``processReplica``: True when the walk must stop here (monotonic)."""
        sts, pod = sync.sts, sync.replicas[i]
        if util.is_failed_or_succeeded(pod):
            # Deleted now, made anew (same name) once the API has removed it.
            if not util.is_terminating(pod):
                self._delete_pod(sts, pod)
            return True
        if not util.is_created(pod):
            if self.control.claim_is_stale(sts, pod):
                return True  # its claim still belongs to the pod before: wait for the GC
            self.control.create_pod(sts, pod)
            if monotonic:
                return True
        if util.is_pending(pod):
            self.control.create_missing_claims(sts, pod)
        if monotonic and (
            util.is_terminating(pod)
            or not util.is_running_and_ready(pod)
            or not util.is_running_and_available(pod, min_ready, now)
        ):
            return True
        if not util.is_created(pod):
            return False  # made just now (Parallel): nothing to put right yet
        try:
            retention_match = self.control.claims_match_policy(sync.update_set, pod)
        except KubeprioError:
            retention_match = True  # expected while the pod is not fully updated
        if not (
            util.identity_matches(sts, pod) and util.storage_matches(sts, pod) and retention_match
        ):
            self.control.update_pod(sync.update_set, pod)
        return False

    def _fix_condemned_claims(self, sync: _Sync, i: int) -> bool:
        """The ``fixPodClaim`` pass of ``updateStatefulSet``: a condemned pod's claims get
        the owner references the retention policy wants before it goes."""
        pod = sync.condemned[i]
        if not self.control.claims_match_policy(sync.update_set, pod):
            self.control.fix_claims(sync.update_set, pod)
        return False

    def _process_condemned(
        self,
        sync: _Sync,
        first_unavailable: Pod | None,
        monotonic: bool,
        i: int,
        min_ready: int,
        now: float,
    ) -> bool:
        """``processCondemned``: delete one pod beyond the replicas (highest ordinal first)."""
        pod = sync.condemned[i]
        if util.is_terminating(pod):
            return monotonic
        if (
            monotonic
            and pod is not first_unavailable
            and (
                not util.is_running_and_ready(pod)
                or not util.is_running_and_available(pod, min_ready, now)
            )
        ):
            return True
        self._delete_pod(sync.sts, pod)
        return True

    def _rolling_update(self, sync: _Sync, min_ready: int, now: float) -> None:
        """The RollingUpdate tail of ``updateStatefulSet``: delete the highest-ordinal
        outdated pod at or above the partition, waiting for unavailable ones."""
        rolling = update_strategy(sync.sts).rolling_update
        update_min = (rolling.partition or 0) if rolling is not None else 0
        for target in range(len(sync.replicas) - 1, update_min - 1, -1):
            pod = sync.replicas[target]
            if util.pod_revision(pod) != sync.update_revision and not util.is_terminating(pod):
                self._delete_pod(sync.sts, pod, missing_ok=True)
                current = (sync.status.current_replicas or 0) - 1
                sync.status = evolve(sync.status, current_replicas=current or None)
                return
            if util.is_unavailable(pod, min_ready, now):
                return

    # --- writes (StatefulPodControl) ---------------------------------------------------------

    def _delete_pod(self, sts: StatefulSet, pod: Pod, *, missing_ok: bool = False) -> None:
        """``DeleteStatefulPod``; the rolling update shrugs off a pod already gone."""
        try:
            self.control.delete_pod(sts, pod)
        except errors.NotFoundError:
            if not missing_ok:
                raise

    # --- status ------------------------------------------------------------------------------

    def _write_status(self, sts: StatefulSet, status: StatefulSetStatus) -> StatefulSetStatus:
        """``updateStatefulSetStatus``: complete a finished rolling update, then write the
        status if it differs (``UpdateStatefulSetStatus``: ``retry.RetryOnConflict`` with
        ``retry.DefaultRetry``, at most 5 attempts, each after re-reading the set)."""
        status = util.complete_rolling_update(sts, status)
        if not util.inconsistent_status(sts, status):
            return status
        target = sts
        for attempt in range(STATUS_UPDATE_ATTEMPTS):
            kept = target.status or StatefulSetStatus()
            written = evolve(status, conditions=kept.conditions, extra=kept.extra)
            try:
                self.client.update_status(evolve(target, status=written))
                return written
            except errors.NotFoundError:
                return written
            except errors.ConflictError:
                if attempt == STATUS_UPDATE_ATTEMPTS - 1:
                    raise
                target = self.client.get(
                    StatefulSet, sts.metadata.name or "", sts.metadata.namespace
                )
        return status
