"""Setting one pod condition the way upstream's ``UpdatePodCondition`` does
(k8s.io/kubernetes ``pkg/api/v1/pod/util.go``).

Driven by the components that write pod conditions through the API: the scheduler's
``PodScheduled=False`` on a pod it cannot place, and the ``DisruptionTarget`` it sets on
a victim before deleting it. The rules:

1. a condition the status lacks is appended after the others (the order upstream's
   two-way strategic merge patch fixes with ``$setElementOrder``);
2. an existing condition of the same type is replaced in place, keeping its
   ``lastTransitionTime`` when its status does not change;
3. nothing is written when status, reason, message, ``lastProbeTime`` and
   ``lastTransitionTime`` would all stay the same; times compare as instants
   (``metav1.Time.Equal``), so ``...T10:00:00Z`` equals ``...T12:00:00+02:00``.

Pure: no I/O.
"""

from __future__ import annotations

from kubeprio.api.core import PodCondition, PodStatus
from kubeprio.api.model import evolve
from kubeprio.clock import parse_rfc3339


def same_instant(first: str | None, second: str | None) -> bool:
    """Whether two optional timestamps name the same instant (unset equals only unset)."""
    if first == second:
        return True
    if first is None or second is None:
        return False
    return parse_rfc3339(first) == parse_rfc3339(second)


def update_pod_condition(
    status: PodStatus | None, condition: PodCondition, *, now: str
) -> PodStatus | None:
    """``status`` with ``condition`` set (stamped ``now`` if it transitions), or None when
    that changes nothing."""
    status = status or PodStatus()
    conditions = status.conditions or ()
    stamped = evolve(condition, last_transition_time=now)
    for index, old in enumerate(conditions):
        if old.type != condition.type:
            continue
        if stamped.status == old.status:
            stamped = evolve(stamped, last_transition_time=old.last_transition_time)
        if (
            stamped.status == old.status
            and stamped.reason == old.reason
            and stamped.message == old.message
            and same_instant(stamped.last_probe_time, old.last_probe_time)
            and same_instant(stamped.last_transition_time, old.last_transition_time)
        ):
            return None
        updated = (*conditions[:index], stamped, *conditions[index + 1 :])
        return evolve(status, conditions=updated)
    return evolve(status, conditions=(*conditions, stamped))
