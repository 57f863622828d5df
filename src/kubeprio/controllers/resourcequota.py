"""The resource quota controller: each ResourceQuota's ``status.hard`` and ``status.used``.

Mirrors ``pkg/controller/resourcequota/resource_quota_controller.go`` (``syncResourceQuota``)
and its replenishment monitor for pods:

* a quota is synced when it is added or changed: ``status.hard`` becomes a copy of
  ``spec.hard`` and ``status.used`` the usage of the namespace's pods that the quota
  tracks (``api.quota``: scopes and scope selector), for exactly the pod resources in
  ``spec.hard``, each listed even at ``0`` (``CalculateUsageStats`` starts every tracked
  resource at zero);
* a pod that is deleted, or whose charge changes (it finishes, or its deletion grace
  runs out), makes every quota of its namespace sync again ("replenishment"). A new pod
  does not: the ResourceQuota admission plugin charged it when it was created;
* the status is written only when it differs (upstream's ``dirty`` check), so a sync
  after admission already charged a pod writes nothing.

Driven like the other controllers: informer events queue quota keys, ``run_once`` syncs
the due ones. A sync lists the namespace's pods through the informer's namespace index:
the cost is the namespace's pods, never the cluster's, and only quota'd namespaces pay it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.quantity import Quantity
from kubeprio.api.quota import (
    ZERO,
    Usage,
    add,
    counts_for_quota,
    is_pod_resource,
    pod_usage,
    quota_scope_matches,
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
        recorder: record.EventRecorder | None = None,
    ) -> None:
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
        pods.add_handler(FuncHandler(on_update=self._pod_updated, on_delete=self._replenish))

    # --- replenishment ------------------------------------------------------------------------

    def _charge(self, pod: Pod) -> Usage:
        return pod_usage(pod, counts=counts_for_quota(pod, self.clock.now()))

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        # Most namespaces hold no quota: look before pricing the pod twice.
        if self.quotas.by_index(NAMESPACE_INDEX, new.metadata.namespace or "") and not _same(
            self._charge(old), self._charge(new)
        ):
            self._replenish(new)

    def _replenish(self, pod: Pod) -> None:
        for quota in self.quotas.by_index(NAMESPACE_INDEX, pod.metadata.namespace or ""):
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
        """``CalculateUsage`` for pods: the tracked pods' charges, masked to ``hard``."""
        tracked = sorted(name for name in hard if is_pod_resource(name))
        used: Usage = dict.fromkeys(tracked, ZERO)
        if not tracked:
            return used
        now = self.clock.now()
        for pod in self.pods.by_index(NAMESPACE_INDEX, quota.metadata.namespace or ""):
            if quota_scope_matches(quota, pod):
                charge = pod_usage(pod, counts=counts_for_quota(pod, now))
                used = add(used, {name: charge[name] for name in tracked if name in charge})
        return used
