"""The HorizontalPodAutoscaler controller: a workload's replicas from its pods' usage.

Mirrors ``pkg/controller/podautoscaler/horizontal.go`` (``HorizontalController``, v1.32):

* every HPA is reconciled every sync period (15 s, ``--horizontal-pod-autoscaler-sync-period``):
  an add or update queues it after the period (the HPA rate limiter's fixed interval) and
  each reconcile queues it again;
* ``reconcileAutoscaler``: the target's ``scale`` subresource through the ``Client``
  (any kind of the resource table with a ``scale`` subresource: Deployment, ReplicaSet,
  StatefulSet), or a custom kind's (``controllers.scaletargets``; ``FailedGetScale``), then: a target at 0 replicas is left alone
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

This module holds the loop, the reconcile and the selector check; the parts live apart:
``controllers.hpametrics`` asks the metrics (Resource and ContainerResource metrics read
the pods' declared usage the way the resource metrics API reports it, through
``controllers.replicacalculator``; Pods, Object and External metrics need a custom or
external metrics API, which kubeprio does not serve: they fail as upstream's do without
one, ``FailedGetPodsMetric``, ...), ``controllers.hpabehavior`` holds the stabilization
and rate rules, ``controllers.hpastatus`` the conditions, the status and its write.

State kept per HPA, as upstream: recent recommendations (for stabilization) and scale
events (for policies), timestamped by the injected clock. Must not import ``apiserver``,
``store`` or ``admission``.
"""

from __future__ import annotations

import random
from typing import Final

from kubeprio.api import errors, kinds, labelparser, selectors
from kubeprio.api.apps import Scale, ScaleSpec
from kubeprio.api.autoscaling import (
    ABLE_TO_SCALE,
    SCALING_ACTIVE,
    SCALING_LIMITED,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerStatus,
    HPAScalingRules,
    MetricSpec,
    MetricStatus,
)
from kubeprio.api.core import Node, Pod
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.podusage import answering
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers import hpabehavior as hb
from kubeprio.controllers import hpametrics
from kubeprio.controllers import replicacalculator as rc
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    by_namespace,
    object_key,
    split_key,
)
from kubeprio.controllers.hpastatus import FALSE, TRUE, Working
from kubeprio.controllers.scaletargets import ClientScaleTarget, CustomScaleTargets, ScaleTarget
from kubeprio.errors import KubeprioError

DEFAULT_SYNC_PERIOD: Final = 15.0
"""``--horizontal-pod-autoscaler-sync-period``."""
DEFAULT_DOWNSCALE_STABILIZATION: Final = 300.0
"""``--horizontal-pod-autoscaler-downscale-stabilization``."""


class HpaError(KubeprioError):
    """A reconcile step failed (upstream's ``fmt.Errorf`` texts)."""


def _gv_group(api_version: str) -> str:
    """``schema.ParseGroupVersion``'s group; an error for more than one ``/``."""
    if api_version.count("/") > 1:
        raise HpaError(f"unexpected GroupVersion string: {api_version}")
    return api_version.rpartition("/")[0] if "/" in api_version else ""


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
        self.custom_scales: CustomScaleTargets | None = None
        """The custom kinds it can target (``controllers.scaletargets``); serve sets it."""
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
        hpas = self.hpas.list()
        if not hpas:
            return 0.0
        longest = 0.0
        for hpa in hpas:
            longest = max(longest, self.downscale_stabilization)
            behavior = hpa.spec.behavior if hpa.spec else None
            for rules in (behavior.scale_up, behavior.scale_down) if behavior else ():
                if rules is None:
                    continue
                longest = max(longest, float(rules.stabilization_window_seconds or 0))
                for policy in rules.policies or ():
                    longest = max(longest, float(policy.period_seconds or 0))
        return longest + 2 * self.sync_period

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

    def _fail_get_scale(self, working: Working, message: str) -> None:
        working.event(record.EVENT_TYPE_WARNING, "FailedGetScale", message)
        working.set_condition(
            ABLE_TO_SCALE,
            FALSE,
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: {message}",
        )
        working.write(self.client)

    def _scale_target(self, group: str, kind: str) -> ScaleTarget:
        """``RESTMappings(GroupKind)``: the kind in its group (any version), a built-in one
        or a custom one served now."""
        for info in kinds.RESOURCES:
            if info.group == group and info.kind == kind:
                return ClientScaleTarget(self.client, info.model)
        if self.custom_scales is not None:
            custom = self.custom_scales.lookup(group, kind)
            if custom is not None:
                return custom
        raise HpaError(f'no matches for kind "{kind}" in group "{group}"')

    def reconcile_autoscaler(self, hpa: HorizontalPodAutoscaler) -> None:
        """``reconcileAutoscaler``."""
        status = hpa.status or HorizontalPodAutoscalerStatus()
        working = Working(
            hpa, list(status.conditions or ()), status, clock=self.clock, recorder=self.recorder
        )
        spec = hpa.spec
        ref = spec.scale_target_ref if spec else None
        ref_kind = (ref.kind if ref else None) or ""
        ref_name = (ref.name if ref else None) or ""
        try:
            group = _gv_group((ref.api_version if ref else None) or "")
            target = self._scale_target(group, ref_kind)
            scale = target.get_scale(ref_name, hpa.metadata.namespace)
        except (HpaError, errors.StatusError) as exc:
            self._fail_get_scale(working, _text(exc))
            return
        working.set_condition(
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
            working.set_condition(
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
                working.set_status(current, status.desired_replicas or 0, metric_statuses, False)
                working.write(self.client)
                working.event(record.EVENT_TYPE_WARNING, "FailedComputeMetricsReplicas", failure)
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
                target.update_scale(
                    evolve(scale, spec=evolve(scale.spec or ScaleSpec(), replicas=desired)),
                )
            except errors.StatusError as exc:
                working.event(
                    record.EVENT_TYPE_WARNING,
                    "FailedRescale",
                    f"New size: {desired}; reason: {reason}; error: {exc.message}",
                )
                working.set_condition(
                    ABLE_TO_SCALE,
                    FALSE,
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {exc.message}",
                )
                working.set_status(current, status.desired_replicas or 0, metric_statuses, False)
                working.write(self.client)
                return
            working.set_condition(
                ABLE_TO_SCALE,
                TRUE,
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            working.event(
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
        working.set_status(current, desired, metric_statuses, rescale)
        working.write(self.client)

    # --- metrics ----------------------------------------------------------------------------

    def _selected_pods(self, working: Working, scale: Scale) -> list[Pod] | str:
        """``validateAndParseSelector``: the pods the selector picks (listed once, for the
        check and the metrics), or the failure message."""
        text = (scale.status.selector if scale.status else None) or ""
        if not text:
            working.event(record.EVENT_TYPE_WARNING, "SelectorRequired", "selector is required")
            working.set_condition(
                SCALING_ACTIVE,
                FALSE,
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            )
            return "selector is required"
        try:
            parsed: selectors.Selector = labelparser.parse_label_selector(text)
        except selectors.SelectorError as exc:
            message = (
                f"couldn't convert selector into a corresponding internal selector object: {exc}"
            )
            working.event(record.EVENT_TYPE_WARNING, "InvalidSelector", message)
            working.set_condition(SCALING_ACTIVE, FALSE, "InvalidSelector", message)
            return message
        key = working.key
        if key in self.selectors:
            self.selectors[key] = parsed
        namespace = working.hpa.metadata.namespace or ""
        pods = self._pods(namespace, parsed)
        others = sorted(
            other
            for other, selector in self.selectors.items()
            if selector is not None
            and split_key(other)[0] == namespace
            and any(selector.matches(pod.metadata.labels or {}) for pod in pods)
        )
        if len(others) > 1:
            shown = " ".join("{" + f"{split_key(o)[1]} {split_key(o)[0]}" + "}" for o in others)
            message = f"pods by selector {text} are controlled by multiple HPAs: [{shown}]"
            working.event(record.EVENT_TYPE_WARNING, "AmbiguousSelector", message)
            working.set_condition(SCALING_ACTIVE, FALSE, "AmbiguousSelector", message)
            return message
        return pods

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
        self, working: Working, scale: Scale, specs: tuple[MetricSpec, ...]
    ) -> tuple[int, str, list[MetricStatus] | None, str | None]:
        """``computeReplicasForMetrics``: the selector validated here, the metrics asked in
        ``controllers.hpametrics``; (replicas or -1, metric name, statuses, error)."""
        pods = self._selected_pods(working, scale)
        if isinstance(pods, str):
            return -1, "", None, pods
        return hpametrics.replicas_for_metrics(
            working,
            specs,
            spec_replicas=(scale.spec.replicas if scale.spec else None) or 0,
            pods=pods,
            calc=self.calculator,
            now=self.clock.now(),
            node_answers=answering(self.nodes.get),
        )

    # --- normalization ----------------------------------------------------------------------

    def _normalize(
        self,
        working: Working,
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
        _set_stabilized(working, stabilized, prenormalized, hb.SCALE_DOWN_STABILIZED)
        desired, reason, message = hb.convert_desired_replicas_with_rules(
            current, stabilized, min_replicas, max_replicas
        )
        return _set_limited(working, desired, stabilized, reason, message)

    def _normalize_with_behaviors(
        self,
        working: Working,
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
        _set_stabilized(working, stabilized, prenormalized, (reason, message))
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
        return _set_limited(working, desired, stabilized, reason, message)


def _set_stabilized(
    working: Working, stabilized: int, prenormalized: int, moved: tuple[str, str]
) -> None:
    """AbleToScale after stabilization, as both normalizations set it: ``moved`` (reason,
    message) when the window changed the recommendation, ``ReadyForNewScale`` otherwise."""
    if stabilized != prenormalized:
        working.set_condition(ABLE_TO_SCALE, TRUE, *moved)
    else:
        working.set_condition(
            ABLE_TO_SCALE, TRUE, "ReadyForNewScale", "recommended size matches current size"
        )


def _set_limited(working: Working, desired: int, stabilized: int, reason: str, message: str) -> int:
    """ScalingLimited after the rate and bounds, as both normalizations set it; ``desired``."""
    working.set_condition(
        SCALING_LIMITED, FALSE if desired == stabilized else TRUE, reason, message
    )
    return desired


def _text(exc: Exception) -> str:
    return exc.message if isinstance(exc, errors.StatusError) else str(exc)
