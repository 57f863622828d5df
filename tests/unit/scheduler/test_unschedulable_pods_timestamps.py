"""The unschedulable pool's oldest timestamps, gated and not (the leftover flush reads
them to decide whether the pool needs a walk at all)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler.framework import PodInfo, QueuedPodInfo
from kubeprio.scheduler.unschedulable_pods import UnschedulablePods
from tests.builders import pod

STEPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "delete"]), st.integers(0, 5), st.integers(0, 50), st.booleans()
    ),
    max_size=40,
)


@given(STEPS)
def test_earliest_timestamps_are_the_pools_own(steps: list[tuple[str, int, int, bool]]) -> None:
    """After any sequence of adds, updates (a new timestamp, gated or not) and deletes,
    each heap answers the minimum over the pods of its kind in the pool."""
    pool = UnschedulablePods()
    infos = {i: PodInfo.of(pod(f"p{i}").build()) for i in range(6)}
    for action, i, timestamp, gated in steps:
        if action == "add":
            pool.add_or_update(
                QueuedPodInfo(infos[i], float(timestamp), gating_plugin="Gate" if gated else "")
            )
        else:
            pool.delete(infos[i].key)
        for want_gated in (False, True):
            expected = [qpi.timestamp for qpi in pool if bool(qpi.gating_plugin) == want_gated]
            assert pool.earliest_timestamp(gated=want_gated) == (
                min(expected) if expected else None
            )
