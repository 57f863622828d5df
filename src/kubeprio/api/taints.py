"""Taint and toleration matching, exactly as upstream's component helpers do it.

Mirrors ``k8s.io/api/core/v1/toleration.go`` (``Toleration.ToleratesTaint``) and
``k8s.io/component-helpers/scheduling/corev1/helpers.go``
(``TolerationsTolerateTaint``, ``FindMatchingUntoleratedTaint``). The rules:

1. an empty toleration effect matches every taint effect, otherwise the effects must
   be equal;
2. an empty toleration key matches every taint key, otherwise the keys must be equal;
3. operator ``Exists`` matches any value; ``Equal`` (or no operator) compares values;
4. ``Lt``/``Gt`` exist behind the alpha gate ``TaintTolerationComparisonOperators``
   (off by default in v1.35), so, as upstream with the gate off, they tolerate nothing;
   any other operator tolerates nothing.

Callers: the scheduler's TaintToleration, NodeUnschedulable and PodTopologySpread
plugins, and the kubelet's admission check. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from kubeprio.api.core import Taint, Toleration

TAINT_EFFECT_NO_SCHEDULE: Final = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE: Final = "NoExecute"
TOLERATION_OP_EXISTS: Final = "Exists"
TAINT_NODE_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
LOST_NODE_TAINT_KEYS: Final = frozenset((TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE))
"""The taints the node lifecycle controller puts on a node it lost (``NoExecute``), which
every pod tolerates for 300 s (the DefaultTolerationSeconds admission plugin)."""
TOLERATION_OP_EQUAL: Final = "Equal"
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
"""The taint a cordoned node carries (``v1.TaintNodeUnschedulable``)."""


def toleration_tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """Whether one toleration tolerates ``taint`` (upstream ``Toleration.ToleratesTaint``)."""
    effect = toleration.effect
    if effect and effect != (taint.effect or ""):
        return False
    key = toleration.key
    if key and key != (taint.key or ""):
        return False
    operator = toleration.operator
    if not operator or operator == TOLERATION_OP_EQUAL:
        return (toleration.value or "") == (taint.value or "")
    # Lt/Gt only with the (default-off) comparison-operators gate; anything else: no.
    return operator == TOLERATION_OP_EXISTS


def tolerations_tolerate_taint(tolerations: Iterable[Toleration] | None, taint: Taint) -> bool:
    """Whether any toleration tolerates ``taint`` (upstream ``TolerationsTolerateTaint``)."""
    for toleration in tolerations or ():  # noqa: SIM110 (explicit loop: hot path)
        if toleration_tolerates_taint(toleration, taint):
            return True
    return False


def do_not_schedule_taint(taint: Taint) -> bool:
    """``NoSchedule`` or ``NoExecute`` (upstream ``helper.DoNotScheduleTaintsFilterFunc``)."""
    effect = taint.effect
    return effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Iterable[Taint] | None,
    tolerations: Iterable[Toleration] | None,
    include: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """The first taint passing ``include`` that no toleration tolerates, or ``None``.

    Upstream ``FindMatchingUntoleratedTaint`` (taints in node order).
    """
    tolerations = tuple(tolerations or ())
    for taint in taints or ():
        if include is not None and not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
