"""The Job controller: run pods to ``completions``, ``parallelism`` at a time, within
``backoffLimit`` failures.

Mirrors ``pkg/controller/job/job_controller.go`` (``syncJob``, ``manageJob``,
``trackJobStatusAndRemoveFinalizers``) for NonIndexed Jobs:

* pods carry the ``batch.kubernetes.io/job-tracking`` finalizer; a finished pod is
  counted in ``status.succeeded``/``status.failed`` exactly once, when the controller
  removes its finalizer;
* which pods failed (``isPodFailed``): a pod in phase Failed; and, unless only failed
  pods are replaced (a ``podFailurePolicy`` is set, or ``podReplacementPolicy:
  Failed``), a pod that was deleted before it succeeded. A preempted pod therefore
  counts as a failure at once by default; with ``podFailurePolicy`` it counts when the
  kubelet reports it Failed, and a rule ``{action: Ignore, onPodConditions: [{type:
  DisruptionTarget}]}`` keeps it out of the count;
* ``active`` excludes terminating pods; with ``podFailurePolicy`` a replacement waits
  until the terminating pod is Failed; replacements of failed pods wait the pod
  failure backoff (10 s doubling to 6 min since the last failure);
* more failures than ``backoffLimit``: ``FailureTarget`` then (once no pod is left
  terminating) ``Failed``, reason ``BackoffLimitExceeded``, "Job has reached the
  specified backoff limit", active pods deleted; enough successes:
  ``SuccessCriteriaMet`` then ``Complete``, reason ``CompletionsReached``, "Reached
  expected number of succeeded pods", with ``completionTime``; a ``FailJob`` rule
  fails the Job with reason ``PodFailurePolicy``; ``activeDeadlineSeconds`` with
  ``DeadlineExceeded``.

Not modelled: Indexed completion (treated as NonIndexed), ``backoffLimitPerIndex``,
``successPolicy``, ``managedBy``. The crash-safe two-step flush through
``status.uncountedTerminatedPods`` is one status write here (in-process writes are
atomic); the field is reported empty. The API applies ``SetDefaults_Job``; the
controller applies it again to what it reads (idempotent: a Job stored before the API
defaulted Jobs still runs as upstream's would), and a Job without a selector selects its pods by
the ``batch.kubernetes.io/controller-uid`` label the controller puts on them.
"""

from __future__ import annotations

import functools
import random

from kubeprio.api import errors, selectors
from kubeprio.api.batch import Job, JobCondition, JobStatus
from kubeprio.api.core import PHASE_SUCCEEDED, Pod
from kubeprio.api.meta import ApiObject, LabelSelector
from kubeprio.api.model import evolve
from kubeprio.api.patch import PatchType
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers import jobutil as ju
from kubeprio.controllers import podutil
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    Expectations,
    by_namespace,
    object_key,
    resolve_controller_ref,
    split_key,
)


class JobController(Controller):
    """``job.Controller``."""

    name = "job-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        jobs: Informer[Job],
        pods: Informer[Pod],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.jobs = jobs
        self.pods = pods
        self.expectations = Expectations(clock)
        self._removed_finalizers: dict[str, set[str]] = {}
        self._backoff: dict[str, ju.BackoffRecord] = {}
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        jobs.add_handler(
            FuncHandler(
                on_add=lambda j: self.queue.add(object_key(j)),
                on_update=lambda _o, j: self.queue.add(object_key(j)),
                on_delete=self._job_deleted,
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=lambda p: self._pod_event(p, added=True),
                on_update=lambda _o, p: self._pod_event(p),
                on_delete=lambda p: self._pod_event(p, deleted=True),
            )
        )

    # --- event handlers --------------------------------------------------------------------

    def _job_deleted(self, job: Job) -> None:
        key = object_key(job)
        self.queue.add(key)
        # Pods the Job still holds by finalizer must be let go (``cleanupPodFinalizers``).
        for pod in self.pods.by_index(NAMESPACE_INDEX, job.metadata.namespace or ""):
            ref = pod.metadata.controller_ref()
            if ref is not None and ref.uid == job.metadata.uid and ju.has_tracking_finalizer(pod):
                self._remove_finalizer(pod)

    def _owner(self, pod: Pod) -> Job | None:
        return resolve_controller_ref(pod, "Job", self.jobs)

    def _pod_event(self, pod: Pod, *, added: bool = False, deleted: bool = False) -> None:
        job = self._owner(pod)
        if job is None:
            if ju.has_tracking_finalizer(pod) and not deleted:
                self._remove_finalizer(pod)  # ``syncOrphanPod``
            return
        key = object_key(job)
        uid = pod.metadata.uid or ""
        if deleted or not ju.has_tracking_finalizer(pod):
            self._removed_finalizers.get(key, set()).discard(uid)
        if added and not pod.metadata.deletion_timestamp:
            self.expectations.creation_observed(key)
        if deleted or (pod.metadata.deletion_timestamp and not added):
            self.expectations.deletion_observed(key, object_key(pod))
        self.queue.add(key)

    def event_target(self, key: str) -> ApiObject | None:
        """The Job of ``key``."""
        namespace, name = split_key(key)
        return self.jobs.get(name, namespace)

    # --- sync --------------------------------------------------------------------------------

    def _selector(self, job: Job) -> selectors.Selector:
        spec = job.spec
        if spec is None or spec.selector is None:
            return podutil.selector_of(
                LabelSelector(match_labels={ju.CONTROLLER_UID_LABEL: job.metadata.uid or ""})
            )
        return podutil.selector_of(spec.selector)

    def reconcile(self, key: str) -> None:
        """``syncJob``."""
        namespace, name = split_key(key)
        job = self.jobs.get(name, namespace)
        if job is None:
            self.expectations.delete(key)
            self._removed_finalizers.pop(key, None)
            self._backoff.pop(key, None)
            return
        if ju.is_finished(job):
            self._backoff.pop(key, None)
            return
        config = ju.settings(job)
        now = self.clock.now()
        now_text = rfc3339(now)
        satisfied = self.expectations.satisfied(key)
        try:
            selector = self._selector(job)
        except selectors.SelectorError:
            return
        pods = podutil.claim(
            self.client, job, selector, self.pods.by_index(NAMESPACE_INDEX, namespace)
        )
        removed = self._removed_finalizers.setdefault(key, set())
        tracked = [
            p
            for p in pods
            if ju.has_tracking_finalizer(p) and (p.metadata.uid or "") not in removed
        ]
        active = [p for p in pods if podutil.is_pod_active(p)]
        terminating = sum(1 for p in pods if podutil.is_pod_terminating(p))
        status = job.status or JobStatus()
        new_succeeded = [p for p in tracked if podutil.phase(p) == PHASE_SUCCEEDED]
        new_failed = [p for p in tracked if ju.is_pod_failed(p, config.only_replace_failed)]
        counted_failed = [p for p in new_failed if ju.match_pod_failure_policy(job, p)[1]]
        succeeded = (status.succeeded or 0) + len(new_succeeded)
        failed = (status.failed or 0) + len(counted_failed)
        start_time = status.start_time
        if start_time is None and not config.suspended:
            start_time = now_text
        backoff = self._backoff.get(key, ju.BackoffRecord()).updated(new_succeeded, new_failed)
        self._backoff[key] = backoff
        conditions = list(status.conditions or ())

        finished = self._finished_condition(
            job, config, pods, failed, start_time, now, now_text, key
        )
        if finished is not None and finished.type != ju.SUCCESS_CRITERIA_MET:
            deleted = self._delete_pods(job, active, remove_finalizers=False)
            if deleted != len(active) or not satisfied:
                finished = None
            terminating += deleted
            active_count = len(active) - deleted
        else:
            active_count = len(active)
            if finished is None and satisfied and not job.metadata.deletion_timestamp:
                active_count = self._manage(
                    job, key, config, active, succeeded, terminating, backoff, now
                )
            complete = (
                succeeded > 0 and active_count == 0
                if config.completions is None
                else succeeded >= config.completions and active_count == 0
            )
            if finished is None and complete:
                finished = ju.new_condition(
                    ju.SUCCESS_CRITERIA_MET,
                    ju.REASON_COMPLETIONS_REACHED,
                    ju.MESSAGE_COMPLETIONS_REACHED,
                    now_text,
                )
        ready = sum(1 for p in active if podutil.is_pod_ready(p))

        # trackJobStatusAndRemoveFinalizers: a finished pod is counted when its finalizer goes.
        written_succeeded, written_failed = status.succeeded or 0, status.failed or 0
        failing = finished is not None and finished.type != ju.SUCCESS_CRITERIA_MET
        all_removed = True
        for pod in tracked:
            failed_pod = ju.is_pod_failed(pod, config.only_replace_failed)
            is_success = podutil.phase(pod) == PHASE_SUCCEEDED
            if not (
                job.metadata.deletion_timestamp or finished is not None or is_success or failed_pod
            ):
                continue
            if not self._remove_finalizer(pod):
                all_removed = False
                continue
            removed.add(pod.metadata.uid or "")
            if is_success:
                written_succeeded += 1
            elif (failed_pod or failing) and ju.match_pod_failure_policy(job, pod)[1]:
                # When the Job fails, every pod not yet terminal counts as failed.
                written_failed += 1
        final: JobCondition | None = None
        if finished is not None:
            if not any(c.type == finished.type for c in conditions):
                conditions.append(finished)
            final_type = ju.COMPLETE if finished.type == ju.SUCCESS_CRITERIA_MET else ju.FAILED
            if all_removed and terminating == 0 and active_count == 0:
                final = ju.new_condition(
                    final_type, finished.reason or "", finished.message or "", now_text
                )
                conditions.append(final)
        extra = dict(status.extra)
        extra["terminating"] = terminating
        extra["uncountedTerminatedPods"] = {}
        new_status = evolve(
            status,
            conditions=tuple(conditions) or None,
            start_time=start_time,
            completion_time=final.last_transition_time
            if final is not None and final.type == ju.COMPLETE
            else status.completion_time,
            active=active_count,
            succeeded=written_succeeded,
            failed=written_failed,
            ready=ready,
            extra=extra,
        )
        if new_status != status:
            self.client.update_status(evolve(job, status=new_status))
        if final is not None:
            if final.type == ju.COMPLETE:
                self.recorder.event(job, record.EVENT_TYPE_NORMAL, "Completed", "Job completed")
            else:
                self.recorder.event(
                    job, record.EVENT_TYPE_WARNING, final.reason or "", final.message or ""
                )

    def _finished_condition(
        self,
        job: Job,
        config: ju.JobSettings,
        pods: list[Pod],
        failed: int,
        start_time: str | None,
        now: float,
        now_text: str,
        key: str,
    ) -> JobCondition | None:
        """The terminal condition the Job has reached, as an interim one, or None."""
        existing = ju.find_condition(job, ju.SUCCESS_CRITERIA_MET)
        if existing is not None and existing.status == "True":
            return existing
        target = ju.find_condition(job, ju.FAILURE_TARGET)
        if target is not None and target.status == "True":
            return target
        if job.spec is not None and job.spec.pod_failure_policy is not None:
            for pod in pods:
                if ju.is_pod_failed(pod, config.only_replace_failed):
                    message = ju.match_pod_failure_policy(job, pod)[0]
                    if message is not None:
                        return ju.new_condition(
                            ju.FAILURE_TARGET, ju.REASON_POD_FAILURE_POLICY, message, now_text
                        )
        if failed > config.backoff_limit:
            return ju.new_condition(
                ju.FAILURE_TARGET,
                ju.REASON_BACKOFF_LIMIT_EXCEEDED,
                ju.MESSAGE_BACKOFF_LIMIT,
                now_text,
            )
        deadline = config.active_deadline_seconds
        if deadline is not None and start_time is not None and not config.suspended:
            elapsed = now - parse_rfc3339(start_time)
            if elapsed >= deadline:
                return ju.new_condition(
                    ju.FAILURE_TARGET, ju.REASON_DEADLINE_EXCEEDED, ju.MESSAGE_DEADLINE, now_text
                )
            self.queue.add_after(key, deadline - elapsed)
        return None

    def _manage(
        self,
        job: Job,
        key: str,
        config: ju.JobSettings,
        active: list[Pod],
        succeeded: int,
        terminating: int,
        backoff: ju.BackoffRecord,
        now: float,
    ) -> int:
        """``manageJob``: delete extra pods or create missing ones; the new active count."""
        count = len(active)
        if config.suspended:
            self.expectations.expect_deletions(key, [object_key(p) for p in active])
            return count - self._delete_pods(job, active, remove_finalizers=True)
        if config.completions is None:
            want = count if succeeded > 0 else config.parallelism
        else:
            want = max(min(config.completions - succeeded, config.parallelism), 0)
        if count > want:
            ordered = sorted(
                sorted(active, key=lambda p: p.metadata.name or ""),
                key=functools.cmp_to_key(_compare_active),
            )[: min(count - want, podutil.MAX_POD_CREATE_DELETE_PER_SYNC)]
            self.expectations.expect_deletions(key, [object_key(p) for p in ordered])
            return count - self._delete_pods(job, ordered, remove_finalizers=True)
        waiting = terminating if config.only_replace_failed else 0
        diff = want - waiting - count
        if diff <= 0:
            return count
        remaining = backoff.remaining(now)
        if remaining > 0:
            self.queue.add_after(key, remaining)
            return count
        diff = min(diff, podutil.MAX_POD_CREATE_DELETE_PER_SYNC)
        self.expectations.expect_creations(key, diff)
        return count + self._create_pods(job, key, diff)

    def _create_pods(self, job: Job, key: str, count: int) -> int:
        """Create ``count`` pods in slow-start batches; return how many were created."""
        template = job.spec.template if job.spec else None
        labels = {
            ju.CONTROLLER_UID_LABEL: job.metadata.uid or "",
            ju.JOB_NAME_LABEL: job.metadata.name or "",
            ju.LEGACY_CONTROLLER_UID_LABEL: job.metadata.uid or "",
            ju.LEGACY_JOB_NAME_LABEL: job.metadata.name or "",
        }
        created = 0
        remaining = count
        batch = min(count, podutil.SLOW_START_INITIAL_BATCH_SIZE)
        failed = False
        pending: WritePendingError | None = None
        while remaining > 0 and not failed and pending is None:
            for _ in range(batch):
                pod = podutil.pod_from_template(
                    template,
                    job,
                    generate_name=podutil.pods_prefix(job.metadata.name or ""),
                    extra_labels=labels,
                    extra_finalizers=(ju.JOB_TRACKING_FINALIZER,),
                )
                try:
                    new = self.client.create(pod)
                except WritePendingError as exc:
                    # Waiting on a webhook (client.writepending): not created, so not
                    # expected; the sync is retried once the answers are in.
                    self.expectations.creation_observed(key)
                    pending = exc
                    continue
                except errors.StatusError as exc:
                    self.expectations.creation_observed(key)
                    self.recorder.event(
                        job, record.EVENT_TYPE_WARNING, "FailedCreate", f"Error creating: {exc}"
                    )
                    failed = True
                    continue
                created += 1
                self.recorder.event(
                    job,
                    record.EVENT_TYPE_NORMAL,
                    "SuccessfulCreate",
                    f"Created pod: {new.metadata.name}",
                )
            remaining -= batch
            batch = min(2 * batch, remaining)
        for _ in range(remaining if failed or pending is not None else 0):
            self.expectations.creation_observed(key)
        if pending is not None:
            raise pending
        return created

    def _delete_pods(self, job: Job, pods: list[Pod], *, remove_finalizers: bool) -> int:
        """``deleteJobPods``/``deleteActivePods``: graceful deletes; how many succeeded."""
        deleted = 0
        pending: WritePendingError | None = None
        job_key = object_key(job)
        for pod in pods:
            if remove_finalizers and not self._remove_finalizer(pod):
                continue
            try:
                self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace)
            except (WritePendingError, errors.StatusError) as exc:
                # Upstream lowers the expectations on any failed delete, "because the
                # informer won't observe this deletion"; so does a delete waiting on a
                # webhook (client.writepending), which is not done yet.
                self.expectations.deletion_observed(job_key, object_key(pod))
                if isinstance(exc, WritePendingError):
                    pending = exc
                elif isinstance(exc, errors.NotFoundError):
                    deleted += 1  # a missing pod still counts as removed
                else:
                    self.recorder.event(
                        job, record.EVENT_TYPE_WARNING, "FailedDelete", f"Error deleting: {exc}"
                    )
                continue
            deleted += 1
            self.recorder.event(
                job,
                record.EVENT_TYPE_NORMAL,
                "SuccessfulDelete",
                f"Deleted pod: {pod.metadata.name}",
            )
        if pending is not None:
            raise pending
        return deleted

    def _remove_finalizer(self, pod: Pod) -> bool:
        """``removeTrackingFinalizerPatch``; True if it is gone (or so is the pod)."""
        if not ju.has_tracking_finalizer(pod):
            return True
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [ju.JOB_TRACKING_FINALIZER]}}
        try:
            self.client.patch(
                Pod,
                pod.metadata.name or "",
                patch,
                namespace=pod.metadata.namespace,
                patch_type=PatchType.STRATEGIC_MERGE_PATCH,
            )
        except errors.NotFoundError:
            return True
        except errors.StatusError:
            return False
        return True


def _compare_active(a: Pod, b: Pod) -> int:
    """``sort.Sort(controller.ActivePods(...))`` as a comparison."""
    if ju.active_pods_less(a, b):
        return -1
    return 1 if ju.active_pods_less(b, a) else 0
