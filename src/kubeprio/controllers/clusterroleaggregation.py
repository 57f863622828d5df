"""The ClusterRole aggregation controller: an aggregated role holds its pieces' rules.

Mirrors ``pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go``:

* any ClusterRole added, updated or deleted queues every ClusterRole that has an
  ``aggregationRule`` (a piece may start or stop matching any of them);
* ``syncClusterRole``: the rules of every other ClusterRole one of the selectors matches,
  by name order, each rule once (``ruleExists``), become the role's rules; a role whose
  rules are already those is left alone (upstream writes them with server-side apply; a
  plain update here).

So ``admin``, ``edit`` and ``view`` hold the rules of the ``aggregate-to-*`` roles
(``apiserver.rbacbootstrap``), and a user's own ClusterRole labelled
``rbac.authorization.k8s.io/aggregate-to-view: "true"`` extends ``view`` at once.
Event-driven; serve wires it. Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import random

from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.rbac import ClusterRole, PolicyRule
from kubeprio.api.selectors import label_selector_as_selector
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller


def aggregated_rules(role: ClusterRole, roles: list[ClusterRole]) -> tuple[PolicyRule, ...]:
    """The rules ``role``'s selectors gather from ``roles`` (by name, each rule once)."""
    rule = role.aggregation_rule
    given = rule.cluster_role_selectors if rule is not None else None
    selectors = [label_selector_as_selector(s) for s in given or ()]
    gathered: list[PolicyRule] = []
    for other in sorted(roles, key=lambda r: r.metadata.name or ""):
        if other.metadata.name == role.metadata.name:
            continue
        labels = other.metadata.labels or {}
        if not any(selector.matches(labels) for selector in selectors):
            continue
        for policy_rule in other.rules or ():
            if policy_rule not in gathered:
                gathered.append(policy_rule)
    return tuple(gathered)


class ClusterRoleAggregationController(Controller):
    """``ClusterRoleAggregationController``."""

    name = "clusterrole-aggregation"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        cluster_roles: Informer[ClusterRole],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.cluster_roles = cluster_roles
        cluster_roles.add_handler(
            FuncHandler(
                on_add=lambda _role: self._enqueue_all(),
                on_update=lambda _old, _new: self._enqueue_all(),
                on_delete=lambda _role: self._enqueue_all(),
            )
        )

    def _enqueue_all(self) -> None:
        """``enqueue``: every aggregated ClusterRole."""
        for role in self.cluster_roles.list():
            if role.aggregation_rule is not None:
                self.queue.add(role.metadata.name or "")

    def event_target(self, key: str) -> ApiObject | None:
        """The aggregated role."""
        return self.cluster_roles.get(key)

    def reconcile(self, key: str) -> None:
        """``syncClusterRole``."""
        role = self.cluster_roles.get(key)
        if role is None or role.aggregation_rule is None:
            return
        rules = aggregated_rules(role, self.cluster_roles.list())
        if rules == (role.rules or ()):
            return
        self.client.update(evolve(role, rules=rules))
