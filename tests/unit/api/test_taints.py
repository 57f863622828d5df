"""Toleration matching, ported from upstream ``k8s.io/api/core/v1/toleration_test.go``
(``TestTolerationToleratesTaint``) and component-helpers ``helpers_test.go``
(``TestFindMatchingUntoleratedTaint``)."""

from __future__ import annotations

import pytest

from kubeprio.api import taints
from kubeprio.api.core import Taint, Toleration

TAINT = Taint(key="foo", value="bar", effect="NoSchedule")

CASES = [
    (
        "toleration and taint have the same key and effect, and operator is Exists, and taint has no value, expect tolerated",
        Toleration(key="foo", operator="Exists", effect="NoSchedule"),
        Taint(key="foo", effect="NoSchedule"),
        True,
    ),
    (
        "toleration and taint have the same key and effect, and operator is Exists, and taint has some value, expect tolerated",
        Toleration(key="foo", operator="Exists", effect="NoSchedule"),
        TAINT,
        True,
    ),
    (
        "toleration and taint have the same effect, toleration has empty key and operator is Exists, means match all taints, expect tolerated",
        Toleration(operator="Exists", effect="NoSchedule"),
        TAINT,
        True,
    ),
    (
        "toleration and taint have the same key, effect and value, and operator is Equal, expect tolerated",
        Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
        TAINT,
        True,
    ),
    (
        "toleration and taint have the same key and effect, but different values, and operator is Equal, expect not tolerated",
        Toleration(key="foo", operator="Equal", value="value1", effect="NoSchedule"),
        TAINT,
        False,
    ),
    (
        "toleration and taint have the same key and value, but different effects, and operator is Equal, expect not tolerated",
        Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
        Taint(key="foo", value="bar", effect="NoExecute"),
        False,
    ),
    ("an empty operator means Equal", Toleration(key="foo", value="bar"), TAINT, True),
    (
        "an empty effect matches every effect",
        Toleration(key="foo", operator="Exists"),
        Taint(key="foo", effect="NoExecute"),
        True,
    ),
    (
        "an empty key with operator Equal compares values only",
        Toleration(operator="Equal", value="bar"),
        TAINT,
        True,
    ),
    (
        "Lt and Gt tolerate nothing while the comparison gate is off",
        Toleration(key="foo", operator="Gt", value="1"),
        Taint(key="foo", value="5", effect="NoSchedule"),
        False,
    ),
    (
        "an unknown operator tolerates nothing",
        Toleration(key="foo", operator="Matches", value="bar"),
        TAINT,
        False,
    ),
]


@pytest.mark.parametrize(("name", "toleration", "taint", "want"), CASES, ids=[c[0] for c in CASES])
def test_toleration_tolerates_taint(name, toleration, taint, want):
    assert taints.toleration_tolerates_taint(toleration, taint) is want


def test_find_matching_untolerated_taint_respects_the_filter_and_order():
    node_taints = (
        Taint(key="soft", effect="PreferNoSchedule"),
        Taint(key="a", effect="NoSchedule"),
        Taint(key="b", effect="NoExecute"),
    )
    tolerations = (Toleration(key="a", operator="Exists"),)
    found = taints.find_matching_untolerated_taint(
        node_taints, tolerations, taints.do_not_schedule_taint
    )
    assert found == node_taints[2]
    assert taints.find_matching_untolerated_taint(node_taints, tolerations) == node_taints[0]
    assert (
        taints.find_matching_untolerated_taint(node_taints, (Toleration(operator="Exists"),))
        is None
    )
