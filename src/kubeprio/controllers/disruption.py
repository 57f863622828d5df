"""The disruption controller: keeps every PodDisruptionBudget's status current.

Mirrors ``pkg/controller/disruption/disruption.go``. For a PDB it lists the pods its
selector matches in its namespace and computes:

* ``expectedPods`` and ``desiredHealthy`` (``getExpectedPodCount``): with an integer
  ``minAvailable``, expected = the matching pods and desired = minAvailable; with a
  percentage ``minAvailable`` or any ``maxUnavailable``, expected = the sum of the
  scales of the pods' controllers (``getExpectedScale``: ReplicaSet, or the Deployment
  above it, ReplicationController, or StatefulSet; a Job has no scale subresource, so that is an error, as
  upstream) and
  desired = ceil(percent of expected), or expected - maxUnavailable (rounded up too);
* ``currentHealthy`` (``countHealthyPods``): Ready pods that are not being deleted and
  not listed in ``disruptedPods`` within the last 2 minutes;
* ``disruptedPods`` (``buildDisruptedPodMap``): entries the eviction API added are
  dropped once the pod is being deleted, or after ``DeletionTimeout`` (2 min, with a
  ``NotDeleted`` event); the PDB is synced again when the next entry expires;
* ``disruptionsAllowed`` = currentHealthy - desiredHealthy, at least 0, and 0 while
  expectedPods is 0; ``observedGeneration``; condition ``DisruptionAllowed``
  (True/``SufficientPods`` or False/``InsufficientPods``).

A sync that fails (e.g. "found no controllers for pod") takes the fail-safe path:
``disruptionsAllowed`` 0 and ``DisruptionAllowed`` False/``SyncFailed``. Pods with a
``DisruptionTarget`` condition that were not deleted within 2 minutes get it reset to
False (``syncStalePodDisruption``), except ones the kubelet set; that reset, waiting on
an admission webhook in ``kubeprio serve``, requeues its key until the answer is in (its
own work queue, as upstream's ``stalePodDisruptionQueue``).

Driven like every controller (``controllers.base``); sees the cluster through the
pod, PDB, ReplicaSet, Deployment and (optionally) StatefulSet and ReplicationController
informers it is given.
"""

from __future__ import annotations

import functools
import math
import random
from typing import Final

from kubeprio.api import errors, kinds, selectors
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod, PodCondition
from kubeprio.api.meta import ApiObject, Condition, LabelSelector, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.api.policy import IntOrString, PodDisruptionBudget, PodDisruptionBudgetStatus
from kubeprio.api.replicationcontroller import KIND as RC_KIND
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.statefulset import StatefulSet
from kubeprio.client import record
from kubeprio.client.answeredretry import retryable
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers import podutil
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    WorkQueue,
    by_namespace,
    object_key,
    split_key,
)

DELETION_TIMEOUT: Final = 120.0
STALE_POD_DISRUPTION_TIMEOUT: Final = 120.0
DISRUPTION_ALLOWED: Final = "DisruptionAllowed"
SUFFICIENT_PODS: Final = "SufficientPods"
INSUFFICIENT_PODS: Final = "InsufficientPods"
SYNC_FAILED: Final = "SyncFailed"
TERMINATION_BY_KUBELET: Final = "TerminationByKubelet"


class ExpectedCountError(Exception):
    """``getExpectedPodCount`` failed; the message is upstream's error text."""


def scaled_value(value: IntOrString, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, int):
        return value
    text = value.strip()
    if not text.endswith("%"):
        raise ExpectedCountError(
            "invalid value for IntOrString: invalid type: string is not a percentage"
        )
    try:
        percent = int(text[:-1])
    except ValueError:
        raise ExpectedCountError(
            f'invalid value "{value}": strconv.Atoi: parsing "{text[:-1]}": invalid syntax'
        ) from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def go_label_selector(selector: LabelSelector | None) -> str:
    """``(*metav1.LabelSelector).String()`` as Go prints it in events (``%v``)."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.match_labels or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.key or ''},Operator:{e.operator or ''},"
        f"Values:[{' '.join(e.values or ())}],}},"
        for e in selector.match_expressions or ()
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )


def set_condition(
    conditions: tuple[Condition, ...] | None, new: Condition, *, now: str
) -> tuple[Condition, ...]:
    """``apimeta.SetStatusCondition``: the transition time moves only with the status."""
    result = list(conditions or ())
    for index, existing in enumerate(result):
        if existing.type != new.type:
            continue
        stamp = existing.last_transition_time if existing.status == new.status else None
        result[index] = evolve(new, last_transition_time=stamp or now)
        return tuple(result)
    result.append(evolve(new, last_transition_time=new.last_transition_time or now))
    return tuple(result)


def _allowed_condition(status: PodDisruptionBudgetStatus, *, now: str) -> tuple[Condition, ...]:
    """``UpdateDisruptionAllowedCondition``."""
    allowed = (status.disruptions_allowed or 0) > 0
    condition = Condition(
        type=DISRUPTION_ALLOWED,
        status="True" if allowed else "False",
        reason=SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
        message="",
        observed_generation=status.observed_generation,
    )
    return set_condition(status.conditions, condition, now=now)


def _conditions_up_to_date(pdb: PodDisruptionBudget) -> bool:
    """``ConditionsAreUpToDate``."""
    status = pdb.status or PodDisruptionBudgetStatus()
    found = next((c for c in status.conditions or () if c.type == DISRUPTION_ALLOWED), None)
    if found is None or (status.observed_generation or 0) != (pdb.metadata.generation or 0):
        return False
    if (status.disruptions_allowed or 0) > 0:
        return found.status == "True" and found.reason == SUFFICIENT_PODS
    return found.status == "False" and found.reason == INSUFFICIENT_PODS


def _api_group(ref: OwnerReference) -> str:
    api_version = ref.api_version or ""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


class DisruptionController(Controller):
    """``DisruptionController``: PDB status from pods and their controllers' scale."""

    name = "controllermanager"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        pdbs: Informer[PodDisruptionBudget],
        replicasets: Informer[ReplicaSet],
        deployments: Informer[Deployment],
        statefulsets: Informer[StatefulSet] | None = None,
        replication_controllers: Informer[ReplicationController] | None = None,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.pods = pods
        self.pdbs = pdbs
        self.replicasets = replicasets
        self.deployments = deployments
        self.statefulsets = statefulsets
        self.replication_controllers = replication_controllers
        self.stale_queue = WorkQueue(clock)
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        pdbs.add_index(NAMESPACE_INDEX, by_namespace)
        pdbs.add_handler(
            FuncHandler(
                on_add=lambda p: self.queue.add(object_key(p)),
                on_update=lambda _o, p: self.queue.add(object_key(p)),
                on_delete=lambda p: self.queue.add(object_key(p)),
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=self._pod_changed,
                on_update=lambda _o, p: self._pod_changed(p),
                on_delete=lambda p: self._pod_changed(p, check_stale=False),
            )
        )

    # --- event handlers --------------------------------------------------------------------

    def _pdbs_for_pod(self, pod: Pod) -> list[PodDisruptionBudget]:
        """``GetPodPodDisruptionBudgets``: same namespace, labelled pod, matching selector."""
        return podutil.selecting(
            self.pdbs.by_index(NAMESPACE_INDEX, pod.metadata.namespace or ""),
            pod.metadata.labels,
            lambda pdb: pdb.spec.selector if pdb.spec else None,
        )

    def _pod_changed(self, pod: Pod, *, check_stale: bool = True) -> None:
        matching = self._pdbs_for_pod(pod)
        if len(matching) > 1:
            chosen = matching[0].metadata.name
            self.recorder.event(
                pod,
                record.EVENT_TYPE_WARNING,
                "MultiplePodDisruptionBudgets",
                f'Pod "{pod.metadata.namespace}"/"{pod.metadata.name}" matches multiple '
                f'PodDisruptionBudgets.  Chose "{chosen}" arbitrarily.',
            )
        for pdb in matching:
            # Upstream enqueues only the first; every matching budget is kept current here.
            self.queue.add(object_key(pdb))
        if check_stale:
            wait = self._stale_wait(pod)
            if wait is not None:
                self.stale_queue.add_after(object_key(pod), wait)

    # --- driving ----------------------------------------------------------------------------

    def run_once(self) -> int:
        """Sync due PDBs, then due stale-condition cleanups."""
        processed = super().run_once()
        for key in self.stale_queue.pop_due():
            try:
                retryable(functools.partial(self._sync_stale_pod_disruption, key))
            except WritePendingError as pending:
                self.stale_queue.add_when_answered(key, pending)
            except errors.StatusError:
                self.stale_queue.add_rate_limited(key)
            processed += 1
        return processed

    def next_wakeup(self) -> float | None:
        """The earlier of the two queues."""
        wakeups = [w for w in (self.queue.next_wakeup(), self.stale_queue.next_wakeup()) if w]
        return min(wakeups) if wakeups else None

    def event_target(self, key: str) -> ApiObject | None:
        """The PDB of ``key``."""
        namespace, name = split_key(key)
        return self.pdbs.get(name, namespace)

    # --- sync ---------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """``sync``: compute and write the PDB's status (fail-safe on errors)."""
        namespace, name = split_key(key)
        pdb = self.pdbs.get(name, namespace)
        if pdb is None:
            return
        try:
            self._try_sync(key, pdb)
        except errors.ConflictError:
            raise
        except ExpectedCountError as exc:
            self._fail_safe(pdb, str(exc))

    def _pods_for_pdb(self, pdb: PodDisruptionBudget) -> list[Pod]:
        selector = podutil.selector_of(pdb.spec.selector if pdb.spec else None)
        return [
            pod
            for pod in self.pods.by_index(NAMESPACE_INDEX, pdb.metadata.namespace or "")
            if selector.matches(pod.metadata.labels or {})
        ]

    def _try_sync(self, key: str, pdb: PodDisruptionBudget) -> None:
        try:
            pods = self._pods_for_pdb(pdb)
        except selectors.SelectorError as exc:
            self.recorder.event(
                pdb, record.EVENT_TYPE_WARNING, "NoPods", f"Failed to get pods: {exc}"
            )
            raise ExpectedCountError(str(exc)) from exc
        if not pods:
            self.recorder.event(pdb, record.EVENT_TYPE_NORMAL, "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self.expected_pod_count(pdb, pods)
        except ExpectedCountError as exc:
            self.recorder.event(
                pdb,
                record.EVENT_TYPE_WARNING,
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {exc}",
            )
            raise
        if unmanaged:
            selector = pdb.spec.selector if pdb.spec else None
            self.recorder.event(
                pdb,
                record.EVENT_TYPE_WARNING,
                "UnmanagedPods",
                "Pods selected by this PodDisruptionBudget (selector: "
                f"{go_label_selector(selector)}) were found to be unmanaged. As a result, the "
                "status of the PDB cannot be calculated correctly, which may result in undefined "
                'behavior. To account for these pods please set ".spec.minAvailable" field of the '
                "PDB to an integer value.",
            )
        now = self.clock.now()
        disrupted, recheck = self._build_disrupted_pod_map(pods, pdb, now)
        healthy = self._count_healthy(pods, disrupted, now)
        self._update_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.queue.add_after(key, recheck - now)

    def expected_pod_count(
        self, pdb: PodDisruptionBudget, pods: list[Pod]
    ) -> tuple[int, int, list[str]]:
        """``getExpectedPodCount``: (expectedCount, desiredHealthy, unmanaged pod names)."""
        spec = pdb.spec
        if spec is None:
            return 0, 0, []
        if spec.max_unavailable is not None:
            expected, unmanaged = self._expected_scale(pods)
            max_unavailable = scaled_value(spec.max_unavailable, expected, round_up=True)
            return expected, max(expected - max_unavailable, 0), unmanaged
        if spec.min_available is not None:
            if isinstance(spec.min_available, int):
                return len(pods), spec.min_available, []
            expected, unmanaged = self._expected_scale(pods)
            return expected, scaled_value(spec.min_available, expected, round_up=True), unmanaged
        return 0, 0, []

    def _expected_scale(self, pods: list[Pod]) -> tuple[int, list[str]]:
        """``getExpectedScale``: the scales of the pods' controllers, each counted once."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = podutil.controller_ref(pod)
            if ref is None:
                unmanaged.append(pod.metadata.name or "")
                continue
            if (ref.uid or "") in scales:
                continue
            found = self._find_controller(ref, pod.metadata.namespace or "")
            if found is None:
                raise ExpectedCountError(f'found no controllers for pod "{pod.metadata.name}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _find_controller(self, ref: OwnerReference, namespace: str) -> tuple[str, int] | None:
        """``finders()``: ReplicaSet, the Deployment above it, ReplicationController,
        StatefulSet, else the scale subresource."""
        group = _api_group(ref)
        if ref.kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self.replicasets.get(ref.name or "", namespace)
            if rs is not None and rs.metadata.uid == ref.uid:
                owner = podutil.controller_ref(rs)
                if owner is None or owner.kind != "Deployment":
                    return rs.metadata.uid or "", _replicas(rs.spec.replicas if rs.spec else None)
                if _api_group(owner) in ("apps", "extensions"):
                    deployment = self.deployments.get(owner.name or "", namespace)
                    if deployment is not None and deployment.metadata.uid == owner.uid:
                        spec = deployment.spec
                        return owner.uid or "", _replicas(spec.replicas if spec else None)
                # No such Deployment: the scale finder reads the ReplicaSet's own scale.
                return rs.metadata.uid or "", _replicas(rs.spec.replicas if rs.spec else None)
            return None
        if ref.kind == "Deployment" and group in ("apps", "extensions"):
            deployment = self.deployments.get(ref.name or "", namespace)
            if deployment is not None and deployment.metadata.uid == ref.uid:
                spec = deployment.spec
                return ref.uid or "", _replicas(spec.replicas if spec else None)
            return None
        rcs = self.replication_controllers
        if ref.kind == RC_KIND and group == "" and rcs is not None:
            # getPodReplicationController
            rc = rcs.get(ref.name or "", namespace)
            if rc is not None and rc.metadata.uid == ref.uid:
                return ref.uid or "", _replicas(rc.spec.replicas if rc.spec else None)
            return None
        if ref.kind == "StatefulSet" and group == "apps" and self.statefulsets is not None:
            # getPodStatefulSet
            sts = self.statefulsets.get(ref.name or "", namespace)
            if sts is not None and sts.metadata.uid == ref.uid:
                return ref.uid or "", _replicas(sts.spec.replicas if sts.spec else None)
            return None
        # getScaleController: only kinds with a scale subresource can be asked.
        try:
            info = kinds.for_kind(ref.api_version or "", ref.kind or "")
        except kinds.UnknownKindError:
            raise ExpectedCountError(
                f'no matches for kind "{ref.kind}" in version "{ref.api_version}"'
            ) from None
        if not info.has_subresource("scale"):
            raise ExpectedCountError(
                f"{info.group_resource} does not implement the scale subresource"
            )
        return None

    def _build_disrupted_pod_map(
        self, pods: list[Pod], pdb: PodDisruptionBudget, now: float
    ) -> tuple[dict[str, str], float | None]:
        """``buildDisruptedPodMap``: keep entries of pods not yet deleted within 2 min."""
        disrupted = (pdb.status.disrupted_pods if pdb.status else None) or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        if not disrupted:
            return result, None
        for pod in pods:
            if pod.metadata.deletion_timestamp:
                continue
            stamp = disrupted.get(pod.metadata.name or "")
            if stamp is None:
                continue
            expected_deletion = parse_rfc3339(stamp) + DELETION_TIMEOUT
            if expected_deletion <= now:
                # Upstream compares with Before (strictly) and retries in real time; at the
                # very instant, virtual time would spin, so an entry expires at 2 min sharp.
                # Upstream prints the namespace twice in this message.
                namespace = pdb.metadata.namespace
                self.recorder.event(
                    pod,
                    record.EVENT_TYPE_WARNING,
                    "NotDeleted",
                    f"Pod was expected by PDB {namespace}/{namespace} to be deleted but it wasn't",
                )
            else:
                if recheck is None or expected_deletion < recheck:
                    recheck = expected_deletion
                result[pod.metadata.name or ""] = stamp
        return result, recheck

    @staticmethod
    def _count_healthy(pods: list[Pod], disrupted: dict[str, str], now: float) -> int:
        """``countHealthyPods``: Ready, not deleting, not recently disrupted."""
        healthy = 0
        for pod in pods:
            if pod.metadata.deletion_timestamp:
                continue
            stamp = disrupted.get(pod.metadata.name or "")
            if stamp is not None and parse_rfc3339(stamp) + DELETION_TIMEOUT > now:
                continue
            if podutil.is_pod_ready(pod):
                healthy += 1
        return healthy

    def _update_status(
        self,
        pdb: PodDisruptionBudget,
        healthy: int,
        desired: int,
        expected: int,
        disrupted: dict[str, str],
    ) -> None:
        """``updatePdbStatus``: write only when something changed."""
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        old = pdb.status or PodDisruptionBudgetStatus()
        generation = pdb.metadata.generation or 0
        if (
            (old.current_healthy or 0) == healthy
            and (old.desired_healthy or 0) == desired
            and (old.expected_pods or 0) == expected
            and (old.disruptions_allowed or 0) == allowed
            and dict(old.disrupted_pods or {}) == disrupted
            and (old.observed_generation or 0) == generation
            and _conditions_up_to_date(pdb)
        ):
            return
        status = PodDisruptionBudgetStatus(
            current_healthy=healthy,
            desired_healthy=desired,
            expected_pods=expected,
            disruptions_allowed=allowed,
            disrupted_pods=disrupted or None,
            observed_generation=generation,
            conditions=old.conditions,
            extra=old.extra,
        )
        status = evolve(
            status, conditions=_allowed_condition(status, now=rfc3339(self.clock.now()))
        )
        self.client.update_status(evolve(pdb, status=status))

    def _fail_safe(self, pdb: PodDisruptionBudget, message: str) -> None:
        """``failSafe``: no disruptions allowed, condition ``SyncFailed``."""
        old = pdb.status or PodDisruptionBudgetStatus()
        condition = Condition(
            type=DISRUPTION_ALLOWED,
            status="False",
            reason=SYNC_FAILED,
            message=message,
            observed_generation=old.observed_generation,
        )
        status = evolve(
            old,
            disruptions_allowed=0,
            conditions=set_condition(old.conditions, condition, now=rfc3339(self.clock.now())),
        )
        self.client.update_status(evolve(pdb, status=status))

    # --- stale DisruptionTarget conditions ----------------------------------------------------

    def _stale_wait(self, pod: Pod) -> float | None:
        """``nonTerminatingPodHasStaleDisruptionCondition``: seconds until it is stale."""
        if pod.metadata.deletion_timestamp:
            return None
        status = pod.status
        condition = next(
            (
                c
                for c in (status.conditions if status else None) or ()
                if c.type == "DisruptionTarget"
            ),
            None,
        )
        if (
            condition is None
            or condition.status != "True"
            or condition.reason == TERMINATION_BY_KUBELET
            or podutil.phase(pod) in (PHASE_SUCCEEDED, PHASE_FAILED)
        ):
            return None
        since = (
            parse_rfc3339(condition.last_transition_time) if condition.last_transition_time else 0.0
        )
        return max(STALE_POD_DISRUPTION_TIMEOUT - (self.clock.now() - since), 0.0)

    def _sync_stale_pod_disruption(self, key: str) -> None:
        """``syncStalePodDisruption``: reset a stale ``DisruptionTarget`` to False."""
        namespace, name = split_key(key)
        pod = self.pods.get(name, namespace)
        if pod is None:
            return
        wait = self._stale_wait(pod)
        if wait is None:
            return
        if wait > 0:
            self.stale_queue.add_after(key, wait)
            return
        reset = PodCondition(type="DisruptionTarget", status="False")
        status = update_pod_condition(pod.status, reset, now=rfc3339(self.clock.now()))
        if status is not None:
            self.client.update_status(evolve(pod, status=status))


def _replicas(value: int | None) -> int:
    """``spec.replicas``; the API defaults an unset value to 1."""
    return 1 if value is None else value
