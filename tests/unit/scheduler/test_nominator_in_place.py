"""``Nominator.update_nominated_pod`` replaces a nomination in place when delete-then-add
(upstream ``UpdateNominatedPod``: ``deleteNominatedPodIfExistsUnlocked`` then
``addNominatedPodUnlocked``) would put it back where it is: the differential test runs
random adds, updates and deletes through a nominator and through one that always deletes
and adds, and compares every node's nominated pods (objects and order), every pod's node,
and what their observers were left with.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.api.core import Pod, PodStatus
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nominator import NominatingInfo, Nominator
from tests.builders import pod

NODES = ("n1", "n2", "n3")
NAMES = ("a", "b", "c", "d")


class _DeleteThenAdd(Nominator):
    """The nominator as upstream's: every update deletes and adds."""

    __slots__ = ()

    def _replace_in_place(self, uid: str, new_info: PodInfo) -> bool:
        return False


class _Recorder:
    """An observer that keeps what the nominations add up to, and counts its calls."""

    def __init__(self) -> None:
        self.current: dict[str, tuple[str, int, tuple[tuple[str, int], ...]]] = {}
        self.calls = 0

    def nominated(self, pod: PodInfo, node_name: str) -> None:
        self.calls += 1
        self.current[pod.uid] = (node_name, pod.priority, tuple(sorted(pod.requests.items())))

    def unnominated(self, uid: str) -> None:
        self.calls += 1
        self.current.pop(uid, None)


def _pod(name: str, nominated: str | None, cpu: str, priority: int) -> Pod:
    built = pod(name).requests(cpu=cpu).priority(priority).build()
    return dataclasses.replace(
        built,
        metadata=dataclasses.replace(built.metadata, uid=f"uid-{name}"),
        status=PodStatus(nominated_node_name=nominated),
    )


_POD = st.builds(
    _pod,
    st.sampled_from(NAMES),
    st.one_of(st.none(), st.sampled_from(NODES)),
    st.sampled_from(("100m", "1")),
    st.sampled_from((0, 10)),
)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), _POD, st.one_of(st.none(), st.sampled_from(NODES))),
        st.tuples(st.just("update"), _POD, st.none()),
        st.tuples(st.just("delete"), _POD, st.none()),
    ),
    max_size=30,
)


def _state(nominator: Nominator, recorder: _Recorder) -> object:
    return (
        {node: nominator.nominated_pods_for_node(node) for node in NODES},
        {f"uid-{name}": nominator.nominated_node(f"uid-{name}") for name in NAMES},
        dict(recorder.current),
    )


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_in_place_updates_leave_the_state_delete_then_add_leaves(
    ops: list[tuple[str, Pod, str | None]],
) -> None:
    fast, reference = Nominator(), _DeleteThenAdd()
    fast.observer, reference.observer = fast_recorder, reference_recorder = _Recorder(), _Recorder()
    latest: dict[str, Pod] = {}
    for op, new, node in ops:
        uid = new.metadata.uid or ""
        for nominator in (fast, reference):
            if op == "add":
                info = None if node is None else NominatingInfo(node)
                nominator.add_nominated_pod(PodInfo.of(new), info)
            elif op == "update":
                nominator.update_nominated_pod(latest.get(uid, new), PodInfo.of(new))
            else:
                nominator.delete_nominated_pod_if_exists(new)
        latest[uid] = new
        assert _state(fast, fast_recorder) == _state(reference, reference_recorder)


def test_the_preemptors_own_status_write_is_an_in_place_update() -> None:
    """The nomination's status write after the scheduler nominated the pod: no observer
    call (its totals stay), the newer object is the one nominated."""
    nominator = Nominator()
    nominator.observer = recorder = _Recorder()
    before = _pod("a", None, "1", 10)
    nominator.add_nominated_pod(PodInfo.of(before), NominatingInfo("n1"))
    calls = recorder.calls
    after = PodInfo.of(_pod("a", "n1", "1", 10))
    nominator.update_nominated_pod(before, after)
    assert recorder.calls == calls
    assert nominator.nominated_pods_for_node("n1") == [after]
    # Another node, other requests, or not the node's last pod: delete-then-add.
    nominator.update_nominated_pod(after.pod, PodInfo.of(_pod("a", "n2", "1", 10)))
    assert recorder.calls == calls + 2
    assert nominator.nominated_node("uid-a") == "n2"
