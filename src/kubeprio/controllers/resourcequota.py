"""The resource quota controller: each ResourceQuota's ``status.hard`` and ``status.used``.

Mirrors ``pkg/controller/resourcequota/resource_quota_controller.go`` (``syncResourceQuota``)
and its replenishment monitors (``resource_quota_monitor.go``):

* a quota is synced when it is added or changed: ``status.hard`` becomes a copy of
  ``spec.hard`` and ``status.used`` the usage, for exactly the resources of ``spec.hard``
  some evaluator tracks, each listed even at ``0`` (``CalculateUsageStats`` starts every
  tracked resource at zero): the namespace's pods the quota's scopes match
  (``api.quota``), and the objects of every other counted kind (``api.quotausage``:
  ``services``, ``services.nodeports``, ``configmaps``, ``count/secrets``,
  ``persistentvolumeclaims``, ``requests.storage``, ``gold.storageclass.storage.k8s.io/
  requests.storage``, ...; these
  never match a scoped quota). Names no evaluator tracks (``count/events``) stay out of
  ``status.used``, as upstream; custom resources' ``count/<plural>.<group>`` are counted
  through ``controllers.quotacustom`` when the composition root hands one in (``serve``);
* replenishment: a deleted object, a pod whose charge changes (it finishes, or its
  deletion grace runs out) and a Service or claim whose charge changes (type or ports;
  size or class) make the
  quotas of its namespace that track its kind sync again. A new object does not: the
  ResourceQuota admission plugin charged it when it was created. (Upstream requeues a
  Service only when its quota type changes and leaves port changes to its 5-minute
  resync, which kubeprio does not run);
* the status is written only when it differs (upstream's ``dirty`` check), so a sync
  after admission already charged an object writes nothing.

Driven like the other controllers: informer events queue quota keys, ``run_once`` syncs
the due ones. A sync reads each counted kind of the quota's namespace through its
informer's namespace index: the cost is the namespace's objects, never the cluster's, and
only quota'd namespaces pay it. The composition root passes the informers of the kinds to
count (``counted``); a kind without one is not counted.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubeprio.api import kinds, quotausage
from kubeprio.api.core import Pod
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.quantity import Quantity
from kubeprio.api.quota import (
    ZERO,
    Usage,
    add,
    counts_for_quota,
    is_pod_resource,
    mask,
    pod_usage,
    quota_scope_matches,
    scope_selectors,
)
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaStatus
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    by_namespace,
    object_key,
    split_key,
)
from kubeprio.controllers.quotacustom import CustomObjectCounts


def _same(left: Mapping[str, Quantity] | None, right: Mapping[str, Quantity] | None) -> bool:
    """``quota.Equals``: the same names with equal amounts (Quantity equality ignores format)."""
    return dict(left or {}) == dict(right or {})


class ResourceQuotaController(Controller):
    """``resourcequota.Controller`` for pods: usage and limits in each quota's status."""

    name = "resourcequota-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        quotas: Informer[ResourceQuota],
        counted: Sequence[Informer[Any]] = (),
        recorder: record.EventRecorder | None = None,
    ) -> None:
        """``counted``: informers of the other kinds whose objects quotas count (the
        quotas informer itself counts ``resourcequotas``)."""
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.pods = pods
        self.quotas = quotas
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        quotas.add_index(NAMESPACE_INDEX, by_namespace)
        quotas.add_handler(
            FuncHandler(
                on_add=lambda q: self.queue.add(object_key(q)),
                on_update=lambda _o, q: self.queue.add(object_key(q)),
            )
        )
        pods.add_handler(FuncHandler(on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.counted: dict[ResourceInfo, Informer[Any]] = {}
        for informer in (quotas, *counted):
            self.count(informer)
        self.custom: CustomObjectCounts | None = None

    def count_custom(self, custom: CustomObjectCounts) -> None:
        """Count custom resources too (``count/<plural>.<group>``, ``controllers.quotacustom``)."""
        self.custom = custom
        custom.subscribe(self._custom_deleted)

    def _custom_deleted(self, namespace: str, name: str) -> None:
        self._replenish(namespace, lambda tracked: tracked == name)

    def count(self, informer: Informer[Any]) -> None:
        """Count the objects ``informer`` holds in quotas (pods, Events and a kind already
        counted are skipped). Before the first pump: an informer added later misses the
        objects it already delivered."""
        info = kinds.for_model(informer.kind)
        if info.model is Pod or quotausage.is_ignored(info) or info in self.counted:
            return
        self.counted[info] = informer
        informer.add_index(NAMESPACE_INDEX, by_namespace)
        informer.add_handler(self._monitor(info))

    # --- replenishment ------------------------------------------------------------------------

    def _charge(self, pod: Pod) -> Usage:
        return pod_usage(pod, counts=counts_for_quota(pod, self.clock.now()))

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        # Most namespaces hold no quota: look before pricing the pod twice.
        namespace = new.metadata.namespace or ""
        if self.quotas.by_index(NAMESPACE_INDEX, namespace) and not _same(
            self._charge(old), self._charge(new)
        ):
            self._replenish(namespace, is_pod_resource)

    def _pod_deleted(self, pod: Pod) -> None:
        self._replenish(pod.metadata.namespace or "", is_pod_resource)

    def _monitor(self, info: ResourceInfo) -> FuncHandler[Any]:
        """The replenishment handler of one counted kind: deletes, and charge changes."""

        def tracks(name: str) -> bool:
            return quotausage.covers(info, name)

        def deleted(obj: Any) -> None:
            self._replenish(obj.metadata.namespace or "", tracks)

        def updated(old: Any, new: Any) -> None:
            if not _same(quotausage.object_usage(info, old), quotausage.object_usage(info, new)):
                self._replenish(new.metadata.namespace or "", tracks)

        # Only a Service's or a claim's charge can change with an update (type or ports;
        # size or class): the other kinds' updates (lease renewals, say) cost nothing
        # here. (Upstream's claim monitor, RequiresQuotaReplenish, compares two fresh
        # pointers and so requeues on every claim update; a changed charge is what it means.)
        on_update = updated if quotausage.charged_on_update(info) else None
        return FuncHandler(on_update=on_update, on_delete=deleted)

    def _replenish(self, namespace: str, tracks: Callable[[str], bool]) -> None:
        """``replenishQuota``: queue the namespace's quotas that limit a tracked name."""
        for quota in self.quotas.by_index(NAMESPACE_INDEX, namespace):
            hard = quota.status.hard if quota.status is not None else None
            if any(tracks(name) for name in hard or {}):
                self.queue.add(object_key(quota))

    # --- sync ---------------------------------------------------------------------------------

    def event_target(self, key: str) -> ApiObject | None:
        """The quota of ``key``."""
        namespace, name = split_key(key)
        return self.quotas.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``syncResourceQuota``: write ``status.hard`` and ``status.used`` if they changed."""
        namespace, name = split_key(key)
        quota = self.quotas.get(name, namespace)
        if quota is None:
            return
        hard = dict((quota.spec.hard if quota.spec is not None else None) or {})
        used = self.usage(quota, hard)
        status = quota.status or ResourceQuotaStatus()
        if _same(status.hard, hard) and status.used is not None and _same(status.used, used):
            return
        self.client.update_status(
            evolve(quota, status=evolve(status, hard=hard or None, used=used or None))
        )

    def usage(self, quota: ResourceQuota, hard: Usage) -> Usage:
        """``CalculateUsage``: the charges of what the quota tracks, masked to ``hard``."""
        namespace = quota.metadata.namespace or ""
        tracked = sorted(name for name in hard if is_pod_resource(name))
        used: Usage = dict.fromkeys(tracked, ZERO)
        if tracked:
            now = self.clock.now()
            for pod in self.pods.by_index(NAMESPACE_INDEX, namespace):
                if quota_scope_matches(quota, pod):
                    charge = pod_usage(pod, counts=counts_for_quota(pod, now))
                    used = add(used, mask(charge, tracked))
        scoped = bool(scope_selectors(quota))
        for info, informer in sorted(self.counted.items(), key=lambda item: item[0].plural):
            names = sorted(name for name in hard if quotausage.covers(info, name))
            if not names:
                continue
            used = add(used, dict.fromkeys(names, ZERO))
            if scoped:
                # These evaluators match no scope: a scoped quota counts none of them.
                continue
            for obj in informer.by_index(NAMESPACE_INDEX, namespace):
                used = add(used, mask(quotausage.object_usage(info, obj), names))
        if self.custom is not None:
            for name in sorted(hard):
                if name in used or not name.startswith(quotausage.COUNT_PREFIX):
                    continue
                count = self.custom.count(namespace, name)
                if count is not None:
                    # The generic evaluator matches no scope either.
                    used[name] = Quantity.from_int(0 if scoped else count)
        return used
