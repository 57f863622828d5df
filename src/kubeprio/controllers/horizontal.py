"""The HorizontalPodAutoscaler controller: a workload's replicas from its pods' usage.

Mirrors ``pkg/controller/podautoscaler/horizontal.go`` (``HorizontalController``, v1.32):

* every HPA is reconciled every sync period (15 s, ``--horizontal-pod-autoscaler-sync-period``):
  an add or update queues it after the period (the HPA rate limiter's fixed interval) and
  each reconcile queues it again;
* ``reconcileAutoscaler``: the target's ``scale`` subresource through the ``Client``
  (any kind of the resource table with a ``scale`` subresource: Deployment, ReplicaSet,
  StatefulSet; ``FailedGetScale``), then: a target at 0 replicas is left alone
  (``ScalingDisabled``), one outside [minReplicas, maxReplicas] is brought inside, and
  otherwise ``computeReplicasForMetrics`` asks every metric (the largest proposal wins;
  a failed metric is skipped unless all fail or the others would scale down),
  ``normalizeDesiredReplicas`` (no ``behavior``: the scale-down stabilization window of
  300 s, then at most ``max(2 * current, 4)``) or ``normalizeDesiredReplicasWithBehaviors``
  (each direction's stabilization window and its Pods/Percent policies over their
  periods, ``Max``/``Min``/``Disabled``), then the Scale is updated (``SuccessfulRescale``
  ``New size: 4; reason: cpu resource utilization (percentage of request) above target``)
  and the status written when it changed (current/desired replicas, current metrics,
  ``lastScaleTime``, the conditions AbleToScale, ScalingActive and ScalingLimited with
  upstream's reasons and messages);
* ``validateAndParseSelector``: the scale's selector is required, parsed, and its pods may
  not be targeted by another HPA too (``AmbiguousSelector``).

Resource and ContainerResource metrics read the pods' declared usage the way the resource
metrics API reports it (``controllers.replicacalculator``). Pods, Object and External
metrics need a custom or external metrics API, which kubeprio does not serve: they fail
as upstream's do without one (``FailedGetPodsMetric``, ...).

State kept per HPA, as upstream: recent recommendations (for stabilization) and scale
events (for policies), timestamped by the injected clock. Must not import ``apiserver``,
``store`` or ``admission``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubeprio.api import errors, kinds, selectors
from kubeprio.api.apps import Scale, ScaleSpec
from kubeprio.api.autoscaling import (
    ABLE_TO_SCALE,
    CONTAINER_RESOURCE,
    RESOURCE,
    SCALING_ACTIVE,
    SCALING_LIMITED,
    ContainerResourceMetricStatus,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus,
    HPAScalingRules,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
    ResourceMetricStatus,
)
from kubeprio.api.core import Node, Pod
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.podusage import node_answers
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers import hpabehavior as hb
from kubeprio.controllers import replicacalculator as rc
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    by_namespace,
    object_key,
    split_key,
)
from kubeprio.errors import KubeprioError

DEFAULT_SYNC_PERIOD: Final = 15.0
"""``--horizontal-pod-autoscaler-sync-period``."""
DEFAULT_DOWNSCALE_STABILIZATION: Final = 300.0
"""``--horizontal-pod-autoscaler-downscale-stabilization``."""
TRUE: Final = "True"
FALSE: Final = "False"


class HpaError(KubeprioError):
    """A reconcile step failed (upstream's ``fmt.Errorf`` texts)."""


@dataclass(slots=True)
class _Working:
    """The HPA being reconciled: its status as it is rebuilt (``hpa.DeepCopy()``)."""

    hpa: HorizontalPodAutoscaler
    conditions: list[HorizontalPodAutoscalerCondition]
    status: HorizontalPodAutoscalerStatus

    @property
    def key(self) -> str:
        return object_key(self.hpa)


def _gv_group(api_version: str) -> str:
    """``schema.ParseGroupVersion``'s group; an error for more than one ``/``."""
    if api_version.count("/") > 1:
        raise HpaError(f"unexpected GroupVersion string: {api_version}")
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _scale_target(group: str, kind: str) -> kinds.ResourceInfo:
    """``RESTMappings(GroupKind)``: the row of the kind in its group (any version)."""
    for info in kinds.RESOURCES:
        if info.group == group and info.kind == kind:
            return info
    raise HpaError(f'no matches for kind "{kind}" in group "{group}"')


class HorizontalController(Controller):
    """``podautoscaler.HorizontalController``."""

    name = "horizontal-pod-autoscaler"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        hpas: Informer[HorizontalPodAutoscaler],
        pods: Informer[Pod],
        nodes: Informer[Node],
        recorder: record.EventRecorder | None = None,
        sync_period: float = DEFAULT_SYNC_PERIOD,
        downscale_stabilization: float = DEFAULT_DOWNSCALE_STABILIZATION,
        calculator: rc.Calculator | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.hpas = hpas
        self.pods = pods
        self.nodes = nodes
        self.sync_period = sync_period
        self.downscale_stabilization = downscale_stabilization
        self.calculator = calculator or rc.Calculator()
        self.recommendations: dict[str, list[hb.Recommendation]] = {}
        self.scale_up_events: dict[str, list[hb.ScaleEvent]] = {}
        self.scale_down_events: dict[str, list[hb.ScaleEvent]] = {}
        # hpaSelectors: each HPA's last target selector, for the AmbiguousSelector check.
        self.selectors: dict[str, selectors.Selector | None] = {}
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        hpas.add_handler(
            FuncHandler(
                on_add=self._enqueue,
                on_update=lambda _old, new: self._enqueue(new),
                on_delete=self._deleted,
            )
        )

    def _enqueue(self, hpa: HorizontalPodAutoscaler) -> None:
        """``enqueueHPA``: ``AddRateLimited`` with the fixed sync interval."""
        key = object_key(hpa)
        self.selectors.setdefault(key, None)
        self.queue.add_after(key, self.sync_period)

    def _deleted(self, hpa: HorizontalPodAutoscaler) -> None:
        key = object_key(hpa)
        self.queue.forget(key)
        self.selectors.pop(key, None)

    def event_target(self, key: str) -> ApiObject | None:
        """The HPA itself."""
        namespace, name = split_key(key)
        return self.hpas.get(name, namespace)

    def idle_horizon(self) -> float:
        """How long nothing may change before every HPA has settled: a sync period, the
        longest stabilization window or policy period of any HPA, and one more period (a
        simulation without ``until`` ends after that much calm; 0 without HPAs)."""
        longest = 0.0
        for hpa in self.hpas.list():
            longest = max(longest, self.downscale_stabilization)
            behavior = hpa.spec.behavior if hpa.spec else None
            for rules in (behavior.scale_up, behavior.scale_down) if behavior else ():
                if rules is None:
                    continue
                longest = max(longest, float(rules.stabilization_window_seconds or 0))
                for policy in rules.policies or ():
                    longest = max(longest, float(policy.period_seconds or 0))
        return longest + 2 * self.sync_period if self.hpas.list() else 0.0

    # --- reconcile --------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """``reconcileKey``: forget a deleted HPA, reconcile and requeue a present one."""
        namespace, name = split_key(key)
        hpa = self.hpas.get(name, namespace)
        if hpa is None:
            self.recommendations.pop(key, None)
            self.scale_up_events.pop(key, None)
            self.scale_down_events.pop(key, None)
            return
        try:
            self.reconcile_autoscaler(hpa)
        finally:
            self.queue.add_after(key, self.sync_period)

    def _event(self, working: _Working, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(working.hpa, event_type, reason, message)

    def _set_condition(
        self, working: _Working, kind: str, status: str, reason: str, message: str
    ) -> None:
        """``setCondition``: a new condition is appended; the transition time moves only
        when the status changes."""
        for i, condition in enumerate(working.conditions):
            if condition.type == kind:
                moved = condition.status != status
                working.conditions[i] = evolve(
                    condition,
                    status=status,
                    reason=reason,
                    message=message,
                    last_transition_time=rfc3339(self.clock.now())
                    if moved
                    else condition.last_transition_time,
                )
                return
        working.conditions.append(
            HorizontalPodAutoscalerCondition(
                type=kind,
                status=status,
                last_transition_time=rfc3339(self.clock.now()),
                reason=reason,
                message=message,
            )
        )

    def _unable_condition(
        self, working: _Working, reason: str, message: str
    ) -> HorizontalPodAutoscalerCondition:
        """``getUnableComputeReplicaCountCondition``: a Warning event now, the condition later."""
        self._event(working, record.EVENT_TYPE_WARNING, reason, message)
        return HorizontalPodAutoscalerCondition(
            type=SCALING_ACTIVE,
            status=FALSE,
            reason=reason,
            message=f"the HPA was unable to compute the replica count: {message}",
        )

    def _fail_get_scale(self, working: _Working, message: str) -> None:
        self._event(working, record.EVENT_TYPE_WARNING, "FailedGetScale", message)
        self._set_condition(
            working,
            ABLE_TO_SCALE,
            FALSE,
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: {message}",
        )
        self._write_status(working)

    def reconcile_autoscaler(self, hpa: HorizontalPodAutoscaler) -> None:
        """``reconcileAutoscaler``."""
        status = hpa.status or HorizontalPodAutoscalerStatus()
        working = _Working(hpa, list(status.conditions or ()), status)
        spec = hpa.spec
        ref = spec.scale_target_ref if spec else None
        ref_kind = (ref.kind if ref else None) or ""
        ref_name = (ref.name if ref else None) or ""
        try:
            group = _gv_group((ref.api_version if ref else None) or "")
            info = _scale_target(group, ref_kind)
            scale = self.client.get_scale(info.model, ref_name, hpa.metadata.namespace)
        except (HpaError, errors.StatusError) as exc:
            self._fail_get_scale(working, _text(exc))
            return
        self._set_condition(
            working,
            ABLE_TO_SCALE,
            TRUE,
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        key = working.key
        current = (scale.spec.replicas if scale.spec else None) or 0
        self.recommendations.setdefault(key, [hb.Recommendation(current, self.clock.now())])
        min_replicas = spec.min_replicas if spec and spec.min_replicas is not None else 1
        max_replicas = (spec.max_replicas if spec else None) or 0
        metric_statuses: list[MetricStatus] | None = None
        desired = 0
        reason = ""
        rescale = True
        if current == 0 and min_replicas != 0:
            rescale = False
            self._set_condition(
                working,
                SCALING_ACTIVE,
                FALSE,
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
        elif current > max_replicas:
            reason = "Current number of replicas above Spec.MaxReplicas"
            desired = max_replicas
        elif current < min_replicas:
            reason = "Current number of replicas below Spec.MinReplicas"
            desired = min_replicas
        else:
            proposed, metric, metric_statuses, failure = self._replicas_for_metrics(
                working, scale, (spec.metrics if spec else None) or ()
            )
            if failure is not None and proposed == -1:
                self._set_status(
                    working, current, status.desired_replicas or 0, metric_statuses, False
                )
                self._write_status(working)
                self._event(
                    working, record.EVENT_TYPE_WARNING, "FailedComputeMetricsReplicas", failure
                )
                return
            rescale_metric = ""
            if proposed > desired:
                desired = proposed
                rescale_metric = metric
            if desired > current:
                reason = f"{rescale_metric} above target"
            if desired < current:
                reason = "All metrics below target"
            behavior = spec.behavior if spec else None
            if behavior is None:
                desired = self._normalize(working, current, desired, min_replicas, max_replicas)
            else:
                desired = self._normalize_with_behaviors(
                    working, behavior, current, desired, min_replicas, max_replicas
                )
            rescale = desired != current
        if rescale:
            try:
                self.client.update_scale(
                    info.model,
                    evolve(scale, spec=evolve(scale.spec or ScaleSpec(), replicas=desired)),
                )
            except errors.StatusError as exc:
                self._event(
                    working,
                    record.EVENT_TYPE_WARNING,
                    "FailedRescale",
                    f"New size: {desired}; reason: {reason}; error: {exc.message}",
                )
                self._set_condition(
                    working,
                    ABLE_TO_SCALE,
                    FALSE,
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {exc.message}",
                )
                self._set_status(
                    working, current, status.desired_replicas or 0, metric_statuses, False
                )
                self._write_status(working)
                return
            self._set_condition(
                working,
                ABLE_TO_SCALE,
                TRUE,
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            self._event(
                working,
                record.EVENT_TYPE_NORMAL,
                "SuccessfulRescale",
                f"New size: {desired}; reason: {reason}",
            )
            behavior = spec.behavior if spec else None
            if behavior is not None:
                # storeScaleEvent: kept only for the behavior's policies.
                up_rules = behavior.scale_up or HPAScalingRules()
                down_rules = behavior.scale_down or HPAScalingRules()
                if desired > current:
                    events = self.scale_up_events.setdefault(key, [])
                    hb.store_scale_event(events, up_rules, desired - current, self.clock.now())
                else:
                    events = self.scale_down_events.setdefault(key, [])
                    hb.store_scale_event(events, down_rules, current - desired, self.clock.now())
        else:
            desired = current
        self._set_status(working, current, desired, metric_statuses, rescale)
        self._write_status(working)

    # --- metrics ----------------------------------------------------------------------------

    def _selector(self, working: _Working, scale: Scale) -> selectors.Selector | str:
        """``validateAndParseSelector``: the selector, or the failure message."""
        text = (scale.status.selector if scale.status else None) or ""
        if not text:
            self._event(
                working, record.EVENT_TYPE_WARNING, "SelectorRequired", "selector is required"
            )
            self._set_condition(
                working,
                SCALING_ACTIVE,
                FALSE,
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            )
            return "selector is required"
        try:
            parsed: selectors.Selector = selectors.parse_label_selector(text)
        except selectors.SelectorError as exc:
            message = (
                f"couldn't convert selector into a corresponding internal selector object: {exc}"
            )
            self._event(working, record.EVENT_TYPE_WARNING, "InvalidSelector", message)
            self._set_condition(working, SCALING_ACTIVE, FALSE, "InvalidSelector", message)
            return message
        key = working.key
        if key in self.selectors:
            self.selectors[key] = parsed
        namespace = working.hpa.metadata.namespace or ""
        others = sorted(
            other
            for other, selector in self.selectors.items()
            if selector is not None
            and split_key(other)[0] == namespace
            and any(
                selector.matches(pod.metadata.labels or {}) for pod in self._pods(namespace, parsed)
            )
        )
        if len(others) > 1:
            shown = " ".join("{" + f"{split_key(o)[1]} {split_key(o)[0]}" + "}" for o in others)
            message = f"pods by selector {text} are controlled by multiple HPAs: [{shown}]"
            self._event(working, record.EVENT_TYPE_WARNING, "AmbiguousSelector", message)
            self._set_condition(working, SCALING_ACTIVE, FALSE, "AmbiguousSelector", message)
            return message
        return parsed

    def _pods(self, namespace: str, selector: selectors.Selector) -> list[Pod]:
        return sorted(
            (
                pod
                for pod in self.pods.by_index(NAMESPACE_INDEX, namespace)
                if selector.matches(pod.metadata.labels or {})
            ),
            key=lambda pod: pod.metadata.name or "",
        )

    def _replicas_for_metrics(
        self, working: _Working, scale: Scale, specs: tuple[MetricSpec, ...]
    ) -> tuple[int, str, list[MetricStatus] | None, str | None]:
        """``computeReplicasForMetrics``: (replicas or -1, metric name, statuses, error)."""
        selector = self._selector(working, scale)
        if isinstance(selector, str):
            return -1, "", None, selector
        spec_replicas = (scale.spec.replicas if scale.spec else None) or 0
        # Upstream's make([]MetricStatus, n): a failed metric leaves a zero entry.
        statuses: list[MetricStatus] = [MetricStatus(type="") for _ in specs]
        replicas = 0
        metric = ""
        invalid = 0
        first_error: str | None = None
        first_condition: HorizontalPodAutoscalerCondition | None = None
        for i, spec in enumerate(specs):
            try:
                proposal, name, statuses[i] = self._replicas_for_metric(
                    working, spec, spec_replicas, selector
                )
            except _MetricFailedError as failure:
                if invalid == 0:
                    first_condition = failure.condition
                    first_error = failure.message
                invalid += 1
                continue
            if replicas == 0 or proposal > replicas:
                replicas = proposal
                metric = name
        error = None
        if first_error is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
        if invalid >= len(specs) or (invalid > 0 and replicas < spec_replicas):
            if first_condition is not None:
                self._set_condition(
                    working,
                    first_condition.type or SCALING_ACTIVE,
                    first_condition.status or FALSE,
                    first_condition.reason or "",
                    first_condition.message or "",
                )
            return -1, "", statuses, error or ""
        self._set_condition(
            working,
            SCALING_ACTIVE,
            TRUE,
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {metric}",
        )
        return replicas, metric, statuses, error

    def _replicas_for_metric(
        self,
        working: _Working,
        spec: MetricSpec,
        spec_replicas: int,
        selector: selectors.Selector,
    ) -> tuple[int, str, MetricStatus]:
        """``computeReplicasForMetric`` for one spec; raises ``_MetricFailedError``."""
        kind = spec.type
        if kind == RESOURCE and spec.resource is not None:
            name = spec.resource.name or ""
            try:
                replicas, current, metric = self._resource(
                    working,
                    spec.resource.target or MetricTarget(),
                    name,
                    "",
                    selector,
                    spec_replicas,
                    kind,
                )
            except rc.MetricsError as exc:
                condition = self._unable_condition(working, "FailedGetResourceMetric", str(exc))
                raise _MetricFailedError(
                    f"failed to get {name} resource metric value: {exc}", condition
                ) from exc
            return (
                replicas,
                metric,
                MetricStatus(
                    type=RESOURCE, resource=ResourceMetricStatus(name=name, current=current)
                ),
            )
        if kind == CONTAINER_RESOURCE and spec.container_resource is not None:
            source = spec.container_resource
            name = source.name or ""
            container = source.container or ""
            try:
                replicas, current, metric = self._resource(
                    working,
                    source.target or MetricTarget(),
                    name,
                    container,
                    selector,
                    spec_replicas,
                    kind,
                )
            except rc.MetricsError as exc:
                condition = self._unable_condition(
                    working, "FailedGetContainerResourceMetric", str(exc)
                )
                raise _MetricFailedError(
                    f"failed to get {container} container metric value: {exc}", condition
                ) from exc
            return (
                replicas,
                metric,
                MetricStatus(
                    type=CONTAINER_RESOURCE,
                    container_resource=ContainerResourceMetricStatus(
                        name=name, container=container, current=current
                    ),
                ),
            )
        custom = rc.custom_metric_failure(spec)
        if custom is not None:
            reason, text = custom
            condition = self._unable_condition(working, reason, text)
            raise _MetricFailedError(text, condition)
        message = f'unknown metric source type "{kind or ""}"'
        condition = self._unable_condition(working, "InvalidMetricSourceType", message)
        raise _MetricFailedError(message, condition)

    def _resource(
        self,
        working: _Working,
        target: MetricTarget,
        resource: str,
        container: str,
        selector: selectors.Selector,
        current_replicas: int,
        source_type: str | None,
    ) -> tuple[int, MetricValueStatus, str]:
        """``computeStatusForResourceMetricGeneric`` over the target's pods."""
        namespace = working.hpa.metadata.namespace or ""
        return rc.resource_metric_status(
            self.calculator,
            target=target,
            resource=resource,
            container=container,
            pods=self._pods(namespace, selector),
            current_replicas=current_replicas,
            container_source=source_type == CONTAINER_RESOURCE,
            now=self.clock.now(),
            node_answers=self._node_answers(),
        )

    def _node_answers(self) -> Callable[[str], bool]:
        cache: dict[str, bool] = {}

        def answers(name: str) -> bool:
            found = cache.get(name)
            if found is None:
                node = self.nodes.get(name)
                found = cache[name] = node is not None and node_answers(node)
            return found

        return answers

    # --- normalization ----------------------------------------------------------------------

    def _normalize(
        self,
        working: _Working,
        current: int,
        prenormalized: int,
        min_replicas: int,
        max_replicas: int,
    ) -> int:
        """``normalizeDesiredReplicas`` (an HPA without ``behavior``)."""
        stabilized = hb.stabilize(
            self.recommendations.setdefault(working.key, []),
            prenormalized,
            window=self.downscale_stabilization,
            now=self.clock.now(),
        )
        if stabilized != prenormalized:
            self._set_condition(
                working,
                ABLE_TO_SCALE,
                TRUE,
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation",
            )
        else:
            self._set_condition(
                working,
                ABLE_TO_SCALE,
                TRUE,
                "ReadyForNewScale",
                "recommended size matches current size",
            )
        desired, reason, message = hb.convert_desired_replicas_with_rules(
            current, stabilized, min_replicas, max_replicas
        )
        limited = FALSE if desired == stabilized else TRUE
        self._set_condition(working, SCALING_LIMITED, limited, reason, message)
        return desired

    def _normalize_with_behaviors(
        self,
        working: _Working,
        behavior: HorizontalPodAutoscalerBehavior,
        current: int,
        prenormalized: int,
        min_replicas: int,
        max_replicas: int,
    ) -> int:
        """``normalizeDesiredReplicasWithBehaviors``."""
        up = behavior.scale_up or HPAScalingRules()
        down = behavior.scale_down or HPAScalingRules()
        if down.stabilization_window_seconds is None:
            # maybeInitScaleDownStabilizationWindow: the controller's flag.
            down = evolve(down, stabilization_window_seconds=int(self.downscale_stabilization))
        key = working.key
        stabilized, reason, message = hb.stabilize_with_behaviors(
            self.recommendations.setdefault(key, []),
            up=up,
            down=down,
            current=current,
            desired=prenormalized,
            now=self.clock.now(),
        )
        if stabilized != prenormalized:
            self._set_condition(working, ABLE_TO_SCALE, TRUE, reason, message)
        else:
            self._set_condition(
                working,
                ABLE_TO_SCALE,
                TRUE,
                "ReadyForNewScale",
                "recommended size matches current size",
            )
        desired, reason, message = hb.convert_desired_replicas_with_behavior_rate(
            current=current,
            desired=stabilized,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            scale_up=up,
            scale_down=down,
            up_events=self.scale_up_events.get(key, []),
            down_events=self.scale_down_events.get(key, []),
            now=self.clock.now(),
        )
        limited = FALSE if desired == stabilized else TRUE
        self._set_condition(working, SCALING_LIMITED, limited, reason, message)
        return desired

    # --- status -----------------------------------------------------------------------------

    def _set_status(
        self,
        working: _Working,
        current: int,
        desired: int,
        metrics: list[MetricStatus] | None,
        rescale: bool,
    ) -> None:
        """``setStatus``."""
        working.status = HorizontalPodAutoscalerStatus(
            current_replicas=current,
            desired_replicas=desired,
            last_scale_time=rfc3339(self.clock.now())
            if rescale
            else working.status.last_scale_time,
            current_metrics=tuple(metrics) if metrics else None,
        )

    def _write_status(self, working: _Working) -> None:
        """``updateStatusIfNeeded``: one write when the status changed."""
        status = evolve(working.status, conditions=tuple(working.conditions) or None)
        old = working.hpa.status or HorizontalPodAutoscalerStatus()
        if _same_status(old, status):
            return
        try:
            self.client.update_status(evolve(working.hpa, status=status))
        except errors.StatusError as exc:
            self._event(working, record.EVENT_TYPE_WARNING, "FailedUpdateStatus", exc.message)


class _MetricFailedError(Exception):
    """One metric failed: the error text and the condition it proposes."""

    def __init__(self, message: str, condition: HorizontalPodAutoscalerCondition) -> None:
        super().__init__(message)
        self.message = message
        self.condition = condition


def _same_status(old: HorizontalPodAutoscalerStatus, new: HorizontalPodAutoscalerStatus) -> bool:
    """``apiequality.Semantic.DeepEqual`` of the two statuses (zero values equal absent)."""
    return (
        (old.current_replicas or 0) == (new.current_replicas or 0)
        and (old.desired_replicas or 0) == (new.desired_replicas or 0)
        and old.last_scale_time == new.last_scale_time
        and (old.current_metrics or ()) == (new.current_metrics or ())
        and (old.conditions or ()) == (new.conditions or ())
        and old.observed_generation == new.observed_generation
    )


def _text(exc: Exception) -> str:
    return exc.message if isinstance(exc, errors.StatusError) else str(exc)
