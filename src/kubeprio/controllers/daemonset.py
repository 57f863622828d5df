"""The DaemonSet controller: one pod from the template on every node that should run it.

Mirrors ``pkg/controller/daemon/daemon_controller.go`` (``syncDaemonSet``, ``manage``,
``podsShouldBeOnNode``, ``syncNodes``, ``updateDaemonSetStatus``, the event handlers) and
``update.go``; the rules live in ``controllers.daemonsetutil`` (placement, pod template),
``daemonsetnode`` (one node's decision), ``daemonsetupdate`` (rolling update),
``daemonsethistory`` (ControllerRevisions) and ``daemonsetstatus``; this module holds the
event handlers and the writes. A sync:

1. claims the pods and ControllerRevisions the selector matches (adopting orphans,
   releasing strays) and brings the history up to date: the current revision's hash is
   the ``controller-revision-hash`` every new pod gets;
2. unless creations or deletions it made are still unobserved (expectations), runs
   ``manage``: per node (``controllers.daemonsetutil.Placement``), create a pod where one
   should run and none is, delete pods where none should (or keep them on a node whose
   new taint is only NoSchedule), delete Failed daemon pods (paced by a per-node backoff,
   1 s doubling to 15 min; event ``FailedDaemonPod``) and Succeeded ones
   (``SucceededDaemonPod``), keep only the oldest of several pods, and delete pods pinned
   to nodes that no longer exist. Creations go in slow-start batches (1, 2, 4, ...), at
   most 250 creations and 250 deletions per sync, in node-name order;
3. with nothing in flight, the update strategy: RollingUpdate (``daemonsetupdate``);
   OnDelete does nothing;
4. deletes old revisions beyond ``revisionHistoryLimit``;
5. writes the status (``desiredNumberScheduled``, ``currentNumberScheduled``,
   ``numberMisscheduled``, ``numberReady``, ``updatedNumberScheduled``, ``numberAvailable``,
   ``numberUnavailable``, ``observedGeneration``), only when something changed.

Each pod is created with required node affinity ``metadata.name In [<node>]`` and no
``nodeName``: the default scheduler places it, so on a full node it preempts pods of
lower priority there (and only there), as on a real cluster.

Event-driven: DaemonSet, ControllerRevision, pod and node events queue the DaemonSets they
concern (a node add or a change of its labels or taints queues the DaemonSets whose
verdict on it changed). Pods and revisions are found through informer indexes (by
controller UID, and orphans by namespace and label), never by scanning all pods. Events:
``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``, ``FailedDelete``,
``SelectingAll``. Driven through ``controllers.base``.
"""

from __future__ import annotations

import functools
import random
from typing import Final, TypeVar

from kubeprio.api import errors, selectors
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Node, Pod, PodSpec, PodTemplateSpec
from kubeprio.api.daemonset import (
    CONTROLLER_REVISION_HASH_LABEL,
    ROLLING_UPDATE,
    DaemonSet,
    template_generation,
)
from kubeprio.api.meta import ApiObject, LabelSelector, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.validation.core import semantic_equal
from kubeprio.api.validation.meta import selector_is_empty
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock
from kubeprio.controllers import (
    daemonsethistory,
    daemonsetnode,
    daemonsetstatus,
    daemonsetupdate,
    daemonsetutil,
    podutil,
)
from kubeprio.controllers.backoff import Backoff
from kubeprio.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    Expectations,
    by_controller,
    by_namespace,
    by_orphan_labels,
    claim_candidates,
    object_key,
    resolve_controller_ref,
    split_key,
)
from kubeprio.errors import KubeprioError

BURST_REPLICAS: Final = 250
"""``BurstReplicas``: creations (and deletions) per sync."""
BACKOFF_GC_INTERVAL: Final = 60.0
"""``BackoffGCInterval``."""
SELECTING_ALL: Final = "SelectingAll"

Owned = TypeVar("Owned", bound=ApiObject)
NodePods = daemonsetnode.NodePods
Verdicts = dict[str, tuple[bool, bool]]


class DaemonSetsController(Controller):
    """``DaemonSetsController``."""

    name = "daemonset-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        daemonsets: Informer[DaemonSet],
        revisions: Informer[ControllerRevision],
        pods: Informer[Pod],
        nodes: Informer[Node],
        recorder: record.EventRecorder | None = None,
        burst_replicas: int = BURST_REPLICAS,
        failed_pods_backoff: Backoff | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.daemonsets = daemonsets
        self.revisions = revisions
        self.pods = pods
        self.nodes = nodes
        self.burst_replicas = burst_replicas
        self.expectations = Expectations(clock)
        self.failed_pods_backoff = failed_pods_backoff or Backoff(clock)
        self._next_backoff_gc = clock.now() + BACKOFF_GC_INTERVAL
        self._placements: dict[str, tuple[int | None, daemonsetutil.Placement]] = {}
        daemonsets.add_index(NAMESPACE_INDEX, by_namespace)
        for informer in (pods, revisions):
            informer.add_index(CONTROLLER_INDEX, by_controller)
            informer.add_index(ORPHAN_INDEX, by_orphan_labels)
        daemonsets.add_handler(
            FuncHandler(
                on_add=self._enqueue, on_update=self._ds_updated, on_delete=self._ds_deleted
            )
        )
        revisions.add_handler(
            FuncHandler(
                on_add=self._revision_added,
                on_update=self._revision_updated,
                on_delete=self._revision_deleted,
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted
            )
        )
        nodes.add_handler(FuncHandler(on_add=self._node_added, on_update=self._node_updated))

    # --- event handlers ----------------------------------------------------------------------

    def _enqueue(self, ds: DaemonSet) -> None:
        self.queue.add(object_key(ds))

    def _ds_updated(self, old: DaemonSet, new: DaemonSet) -> None:
        if old.metadata.uid != new.metadata.uid:
            self._ds_deleted(old)
        self._enqueue(new)

    def _ds_deleted(self, ds: DaemonSet) -> None:
        key = object_key(ds)
        self.expectations.delete(key)
        self._placements.pop(ds.metadata.uid or "", None)
        self.queue.add(key)

    def _owner(self, obj: ApiObject) -> DaemonSet | None:
        """``resolveControllerRef``: the DaemonSet controlling ``obj``, if it exists."""
        return resolve_controller_ref(obj, "DaemonSet", self.daemonsets)

    def _matching(self, obj: ApiObject) -> list[DaemonSet]:
        """``GetPodDaemonSets``/``GetHistoryDaemonSets``: DaemonSets selecting an orphan."""
        return podutil.selecting(
            self.daemonsets.by_index(NAMESPACE_INDEX, obj.metadata.namespace or ""),
            obj.metadata.labels,
            lambda ds: ds.spec.selector if ds.spec else None,
        )

    def _revision_added(self, revision: ControllerRevision) -> None:
        if revision.metadata.deletion_timestamp:
            self._revision_deleted(revision)
            return
        if revision.metadata.controller_ref() is not None:
            owner = self._owner(revision)
            if owner is not None:
                self._enqueue(owner)
            return
        for ds in self._matching(revision):
            self._enqueue(ds)

    def _revision_updated(self, old: ControllerRevision, new: ControllerRevision) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        owner = self._owner_after_update(old, new)
        if owner is not None:
            self._enqueue(owner)

    def _owner_after_update(self, old: ApiObject, new: ApiObject) -> DaemonSet | None:
        """``updatePod``/``updateHistory``: a changed controller reference queues the old
        owner; the new owner is returned. An orphan (None) whose labels or reference
        changed queues the DaemonSets that now select it."""
        old_ref: OwnerReference | None = old.metadata.controller_ref()
        new_ref: OwnerReference | None = new.metadata.controller_ref()
        if old_ref != new_ref and old_ref is not None:
            previous = self._owner(old)
            if previous is not None:
                self._enqueue(previous)
        if new_ref is not None:
            return self._owner(new)
        if old.metadata.labels != new.metadata.labels or old_ref != new_ref:
            for ds in self._matching(new):
                self._enqueue(ds)
        return None

    def _revision_deleted(self, revision: ControllerRevision) -> None:
        owner = self._owner(revision)
        if owner is not None:
            self._enqueue(owner)

    def _pod_added(self, pod: Pod) -> None:
        if pod.metadata.deletion_timestamp:
            self._pod_deleted(pod)  # seen for the first time already going: not a creation
            return
        if pod.metadata.controller_ref() is not None:
            owner = self._owner(pod)
            if owner is not None:
                key = object_key(owner)
                self.expectations.creation_observed(key)
                self.queue.add(key)
            return
        for ds in self._matching(pod):
            self._enqueue(ds)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        if new.metadata.deletion_timestamp:
            # A graceful delete: act now rather than when the kubelet removes the pod.
            self._pod_deleted(new)
            return
        owner = self._owner_after_update(old, new)
        if owner is None:
            return
        self._enqueue(owner)
        min_ready = (owner.spec.min_ready_seconds if owner.spec else None) or 0
        if min_ready and not podutil.is_pod_ready(old) and podutil.is_pod_ready(new):
            self.queue.add_after(object_key(owner), min_ready + 1)

    def _pod_deleted(self, pod: Pod) -> None:
        owner = self._owner(pod)
        if owner is None:
            return
        key = object_key(owner)
        self.expectations.deletion_observed(key, object_key(pod))
        self.queue.add(key)

    def placement(self, ds: DaemonSet) -> daemonsetutil.Placement:
        """The DaemonSet's ``Placement``, worked out once per spec generation."""
        uid = ds.metadata.uid or ""
        cached = self._placements.get(uid)
        if cached is not None and cached[0] == ds.metadata.generation:
            return cached[1]
        placement = daemonsetutil.Placement(ds)
        self._placements[uid] = (ds.metadata.generation, placement)
        return placement

    def _node_added(self, node: Node) -> None:
        for ds in self.daemonsets.list():
            if self.placement(ds).node_should_run(node)[0]:
                self._enqueue(ds)

    def _node_updated(self, old: Node, new: Node) -> None:
        # shouldIgnoreNodeUpdate: only labels and taints decide where daemon pods run.
        if semantic_equal(old.metadata.labels, new.metadata.labels) and semantic_equal(
            old.spec.taints if old.spec else None, new.spec.taints if new.spec else None
        ):
            return
        for ds in self.daemonsets.list():
            placement = self.placement(ds)
            if placement.node_should_run(old) != placement.node_should_run(new):
                self._enqueue(ds)

    # --- sync ----------------------------------------------------------------------------------

    def event_target(self, key: str) -> ApiObject | None:
        """The DaemonSet of ``key``."""
        namespace, name = split_key(key)
        return self.daemonsets.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``syncDaemonSet``."""
        self._collect_backoff_garbage()
        namespace, name = split_key(key)
        ds = self.daemonsets.get(name, namespace)
        if ds is None:
            self.expectations.delete(key)
            return
        selector_spec = ds.spec.selector if ds.spec else None
        if selector_spec is not None and selector_is_empty(selector_spec):
            self.recorder.event(
                ds,
                record.EVENT_TYPE_WARNING,
                SELECTING_ALL,
                "This daemon set is selecting all pods. A non-empty selector is required.",
            )
            return
        if ds.metadata.deletion_timestamp:
            return  # its history may be half gone: no status either, as upstream
        try:
            selector = podutil.selector_of(selector_spec)
        except selectors.SelectorError:
            return  # validation refuses such selectors; an old stored one does nothing
        pods = self._claim(self.pods, ds, selector_spec, selector)
        revisions = self._claim(self.revisions, ds, selector_spec, selector)
        current, old = daemonsethistory.construct_history(self.client, ds, revisions, pods)
        hash_ = current.metadata.label(CONTROLLER_REVISION_HASH_LABEL) or ""
        nodes = self.nodes.list()
        placement = self.placement(ds)
        verdicts: Verdicts = {
            node.metadata.name or "": placement.node_should_run(node) for node in nodes
        }
        node_pods = daemonsetnode.node_pods(pods, include_deleted_terminal=False)
        if not self.expectations.satisfied(key):
            # Only the status; observedGeneration stays: this generation was not acted on.
            self._update_status(key, ds, verdicts, node_pods, hash_, observed=False)
            return
        failure: KubeprioError | None = None
        try:
            self._update_daemon_set(key, ds, verdicts, node_pods, hash_)
            daemonsethistory.cleanup_history(self.client, ds, old, pods)
        except KubeprioError as exc:
            failure = exc
        try:
            self._update_status(key, ds, verdicts, node_pods, hash_, observed=True)
        except KubeprioError:
            if failure is None:
                raise
        if failure is not None:
            raise failure

    def _claim(
        self,
        informer: Informer[Owned],
        ds: DaemonSet,
        spec: LabelSelector | None,
        selector: selectors.Selector,
    ) -> list[Owned]:
        """``ClaimPods``/``ClaimControllerRevisions`` over the owned objects and the orphans
        the selector could match (``base.claim_candidates``)."""
        candidates = claim_candidates(informer, ds, spec)
        return podutil.claim(self.client, ds, selector, candidates)

    def _update_daemon_set(
        self, key: str, ds: DaemonSet, verdicts: Verdicts, node_pods: NodePods, hash_: str
    ) -> None:
        """``updateDaemonSet``: manage, then the update strategy once nothing is in flight."""
        self._manage(key, ds, verdicts, node_pods, hash_)
        if not self.expectations.satisfied(key):
            return
        strategy = ds.spec.update_strategy if ds.spec else None
        if strategy is not None and strategy.type == ROLLING_UPDATE:
            plan = daemonsetupdate.rolling_update(
                ds,
                hash_,
                template_generation(ds),
                {name: verdict[0] for name, verdict in verdicts.items()},
                node_pods,
                self.clock.now(),
            )
            self._sync_nodes(key, ds, plan.pods_to_delete, plan.nodes_to_create, hash_)
        # OnDelete: new pods only replace the ones somebody else deletes (manage does it).

    def _manage(
        self, key: str, ds: DaemonSet, verdicts: Verdicts, node_pods: NodePods, hash_: str
    ) -> None:
        """``manage``: ``podsShouldBeOnNode`` for every node, then ``syncNodes``."""
        to_create: list[str] = []
        to_delete: list[str] = []
        now = self.clock.now()
        for name in sorted(verdicts):
            decision = daemonsetnode.pods_should_be_on_node(
                name,
                verdicts[name],
                node_pods.get(name),
                ds,
                hash_,
                now,
                functools.partial(self._may_replace_failed_pod, ds, name),
            )
            for event_type, reason, message in decision.events:
                self.recorder.event(ds, event_type, reason, message)
            if decision.create:
                to_create.append(name)
            to_delete.extend(decision.delete)
        # getUnscheduledPodsWithoutNode: pods pinned to a node that is gone can never be
        # scheduled, and pod GC only removes bound pods.
        for name in sorted(set(node_pods) - set(verdicts)):
            to_delete.extend(
                p.metadata.name or "" for p in node_pods[name] if not (p.spec and p.spec.node_name)
            )
        self._sync_nodes(key, ds, to_delete, to_create, hash_)

    def _may_replace_failed_pod(self, ds: DaemonSet, node: str) -> bool:
        """Whether the node's failed pod may be replaced now (the backoff then grows);
        if not, the DaemonSet is queued for when it may (``failedPodsBackoff``)."""
        observed = (ds.status.observed_generation if ds.status else None) or 0
        backoff_key = f"{ds.metadata.uid}/{observed}/{node}"
        if self.failed_pods_backoff.in_backoff_since_update(backoff_key):
            self.queue.add_after(object_key(ds), self.failed_pods_backoff.get(backoff_key))
            return False
        self.failed_pods_backoff.next(backoff_key)
        return True

    def _collect_backoff_garbage(self) -> None:
        now = self.clock.now()
        if now >= self._next_backoff_gc:
            self.failed_pods_backoff.gc()
            self._next_backoff_gc = now + BACKOFF_GC_INTERVAL

    def _sync_nodes(
        self, key: str, ds: DaemonSet, to_delete: list[str], to_create: list[str], hash_: str
    ) -> None:
        """``syncNodes``: create pods on ``to_create`` (slow start), delete ``to_delete``;
        raise the first API error after trying them all."""
        create_count = min(len(to_create), self.burst_replicas)
        deletions = to_delete[: self.burst_replicas]
        namespace = ds.metadata.namespace or ""
        self.expectations.expect_creations(key, create_count)
        self.expectations.expect_deletions(key, [f"{namespace}/{name}" for name in deletions])
        failures: list[KubeprioError] = []
        template = daemonsetutil.create_pod_template(
            ds.spec.template if ds.spec else None, template_generation(ds), hash_
        )
        prefix = podutil.pods_prefix(ds.metadata.name or "")
        position = 0
        batch = min(create_count, podutil.SLOW_START_INITIAL_BATCH_SIZE)
        while position < create_count:
            failed_before = len(failures)
            for node in to_create[position : position + batch]:
                failure = self._create_pod(key, ds, template, node, prefix)
                if failure is not None:
                    failures.append(failure)
            position += batch
            skipped = create_count - position
            if len(failures) > failed_before and skipped > 0:
                for _ in range(skipped):  # never attempted: not expected either
                    self.expectations.creation_observed(key)
                break
            batch = min(2 * batch, skipped)
        for name in deletions:
            failure = self._delete_pod(key, ds, name)
            if failure is not None:
                failures.append(failure)
        if failures:
            raise failures[0]

    def _create_pod(
        self, key: str, ds: DaemonSet, template: PodTemplateSpec, node: str, prefix: str
    ) -> KubeprioError | None:
        """Create the daemon pod of ``node``: pinned there by node affinity, not bound."""
        spec = template.spec or PodSpec()
        pinned = evolve(
            template, spec=evolve(spec, affinity=daemonsetutil.pin_to_node(spec.affinity, node))
        )
        pod = podutil.pod_from_template(pinned, ds, generate_name=prefix)
        try:
            created = self.client.create(pod)
        except WritePendingError as exc:
            # Waiting on a webhook (client.writepending): not created, so not expected.
            self.expectations.creation_observed(key)
            return exc
        except errors.StatusError as exc:
            self.expectations.creation_observed(key)
            self.recorder.event(
                ds, record.EVENT_TYPE_WARNING, "FailedCreate", f"Error creating: {exc}"
            )
            return exc
        self.recorder.event(
            ds,
            record.EVENT_TYPE_NORMAL,
            "SuccessfulCreate",
            f"Created pod: {created.metadata.name}",
        )
        return None

    def _delete_pod(self, key: str, ds: DaemonSet, name: str) -> KubeprioError | None:
        """Delete one daemon pod (gracefully: it keeps its node until it has stopped)."""
        namespace = ds.metadata.namespace or ""
        try:
            self.client.delete(Pod, name, namespace)
        except WritePendingError as exc:
            self.expectations.deletion_observed(key, f"{namespace}/{name}")
            return exc
        except errors.NotFoundError:
            self.expectations.deletion_observed(key, f"{namespace}/{name}")
            return None
        except errors.StatusError as exc:
            self.expectations.deletion_observed(key, f"{namespace}/{name}")
            self.recorder.event(
                ds, record.EVENT_TYPE_WARNING, "FailedDelete", f"Error deleting: {exc}"
            )
            return exc
        self.recorder.event(
            ds, record.EVENT_TYPE_NORMAL, "SuccessfulDelete", f"Deleted pod: {name}"
        )
        return None

    # --- status -----------------------------------------------------------------------------

    def _update_status(
        self,
        key: str,
        ds: DaemonSet,
        verdicts: Verdicts,
        node_pods: NodePods,
        hash_: str,
        *,
        observed: bool,
    ) -> None:
        """``updateDaemonSetStatus`` and ``storeDaemonSetStatus`` (one retry on a conflict)."""
        counts = daemonsetstatus.calculate_counts(ds, verdicts, node_pods, hash_, self.clock.now())
        written = daemonsetstatus.with_counts(ds, counts, observed=observed)
        # Upstream also rewrites an identical status while observedGeneration lags; here
        # a write that changes nothing is skipped, so it cannot wake the controller again.
        if written.status != ds.status and not daemonsetstatus.up_to_date(ds, counts):
            target = ds
            for attempt in range(2):
                try:
                    self.client.update_status(
                        daemonsetstatus.with_counts(target, counts, observed=observed)
                    )
                    break
                except errors.NotFoundError:
                    return
                except errors.ConflictError:
                    if attempt:
                        raise
                    target = self.client.get(
                        DaemonSet, ds.metadata.name or "", ds.metadata.namespace
                    )
        min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
        if min_ready > 0 and counts["number_ready"] != counts["number_available"]:
            self.queue.add_after(key, float(min_ready))
