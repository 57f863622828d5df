"""PrioritySort (upstream ``plugins/queuesort/priority_sort_test.go``, semantics §3.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler.framework import PodInfo, QueuedPodInfo
from kubeprio.scheduler.plugins import names
from kubeprio.scheduler.plugins.queuesort import PrioritySort
from tests.builders import pod


def _qpi(priority: int | None, timestamp: float) -> QueuedPodInfo:
    builder = pod(f"p{priority}-{timestamp}")
    if priority is not None:
        builder = builder.priority(priority)
    return QueuedPodInfo(pod_info=PodInfo.of(builder.build()), timestamp=timestamp)


# Upstream TestLess: priority first, then the earlier queue timestamp.
@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((100, 10.0), (50, 5.0), True),
        ((50, 5.0), (100, 10.0), False),
        ((100, 5.0), (100, 10.0), True),
        ((100, 10.0), (100, 5.0), False),
        ((100, 5.0), (100, 5.0), False),
        ((None, 1.0), (0, 2.0), True),
        ((0, 2.0), (None, 1.0), False),
        ((-1, 1.0), (None, 2.0), False),
    ],
    ids=[
        "higher-priority-first",
        "lower-priority-later",
        "same-priority-earlier-timestamp-first",
        "same-priority-later-timestamp-later",
        "identical-is-not-less",
        "unset-priority-is-zero",
        "zero-vs-unset-by-timestamp",
        "negative-below-unset",
    ],
)
def test_less_orders_by_priority_then_queue_timestamp(
    a: tuple[int | None, float], b: tuple[int | None, float], expected: bool
) -> None:
    assert PrioritySort().less(_qpi(*a), _qpi(*b)) is expected


def test_name_is_upstream() -> None:
    assert PrioritySort().name == "PrioritySort" == names.PRIORITY_SORT


@given(
    st.tuples(st.integers(-(2**31), 2**31 - 1), st.floats(0, 1e6)),
    st.tuples(st.integers(-(2**31), 2**31 - 1), st.floats(0, 1e6)),
)
def test_sort_key_agrees_with_less(a: tuple[int, float], b: tuple[int, float]) -> None:
    plugin = PrioritySort()
    qa, qb = _qpi(*a), _qpi(*b)
    assert (plugin.sort_key(qa) < plugin.sort_key(qb)) is plugin.less(qa, qb)
