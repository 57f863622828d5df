"""``update_pod_condition``: upstream ``UpdatePodCondition`` (pkg/api/v1/pod/util.go).

Rules checked: a new condition is appended after the existing ones (the order that
upstream's two-way strategic merge patch fixes with ``$setElementOrder``); an existing
one is replaced in place; its lastTransitionTime moves only when its status changes;
and nothing is written when status, reason, message, lastProbeTime and
lastTransitionTime would all stay the same, times comparing as instants
(``metav1.Time.Equal``), not as texts.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import PodCondition, PodStatus
from kubeprio.api.podconditions import update_pod_condition

NOW = "2026-11-21T12:00:00Z"
EARLIER = "2026-11-21T11:00:00Z"


def _c(type_: str, status: str = "True", *, reason=None, message=None, at=EARLIER, probe=None):
    return PodCondition(
        type=type_,
        status=status,
        reason=reason,
        message=message,
        last_transition_time=at,
        last_probe_time=probe,
    )


# (id, existing conditions, condition to set, expected conditions or None for "no change")
CASES = [
    (
        "no status at all: the condition is the only one",
        None,
        _c("PodScheduled", "False", reason="Unschedulable", at=None),
        (_c("PodScheduled", "False", reason="Unschedulable", at=NOW),),
    ),
    (
        "a new type goes after the existing ones",
        (_c("PodScheduled"), _c("Ready")),
        _c("DisruptionTarget", reason="PreemptionByScheduler", at=None),
        (
            _c("PodScheduled"),
            _c("Ready"),
            _c("DisruptionTarget", reason="PreemptionByScheduler", at=NOW),
        ),
    ),
    (
        "same status, new message: replaced in place, transition time kept",
        (_c("PodScheduled", "False", message="old"), _c("Ready", "False")),
        _c("PodScheduled", "False", message="new", at=None),
        (_c("PodScheduled", "False", message="new", at=EARLIER), _c("Ready", "False")),
    ),
    (
        "status flips: transition time is now",
        (_c("Ready", "False"), _c("PodScheduled", "True")),
        _c("PodScheduled", "False", reason="Unschedulable", at=None),
        (_c("Ready", "False"), _c("PodScheduled", "False", reason="Unschedulable", at=NOW)),
    ),
    (
        "identical condition: nothing to write",
        (_c("DisruptionTarget", reason="PreemptionByScheduler", message="m"),),
        _c("DisruptionTarget", reason="PreemptionByScheduler", message="m", at=None),
        None,
    ),
    (
        "a lastProbeTime that goes away is a change",
        (_c("PodScheduled", "False", probe=EARLIER),),
        _c("PodScheduled", "False", at=None),
        (_c("PodScheduled", "False", at=EARLIER),),
    ),
    (
        "the same lastProbeTime written with an offset: nothing to write",
        (_c("PodScheduled", "False", probe=EARLIER),),
        _c("PodScheduled", "False", at=None, probe="2026-11-21T13:00:00+02:00"),
        None,
    ),
    (
        "a later lastProbeTime is a change",
        (_c("PodScheduled", "False", probe=EARLIER),),
        _c("PodScheduled", "False", at=None, probe=NOW),
        (_c("PodScheduled", "False", at=EARLIER, probe=NOW),),
    ),
]


@pytest.mark.parametrize(
    ("existing", "condition", "expected"),
    [pytest.param(case[1], case[2], case[3], id=case[0]) for case in CASES],
)
def test_update_pod_condition(existing, condition, expected):
    status = None if existing is None else PodStatus(phase="Running", conditions=existing)
    result = update_pod_condition(status, condition, now=NOW)
    if expected is None:
        assert result is None
        return
    assert result is not None
    assert result.conditions == expected
    if status is not None:
        assert result.phase == "Running"  # the rest of the status is kept
