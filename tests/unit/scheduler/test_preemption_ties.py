"""Which of several identical pods is evicted: upstream's order of a node's pods.

``SelectVictimsOnNode`` (``plugins/defaultpreemption/default_preemption.go``) collects
the node's lower-priority pods in ``NodeInfo.Pods`` order, sorts them with
``util.MoreImportantPod`` (higher priority, then earlier start) and reprieves them in that
order; among pods of equal priority and start time the first in the node's list is
reprieved first. That list changes as upstream's cache changes it
(``pkg/scheduler/backend/cache``): ``addPod`` appends, ``removePod`` moves the node's last
pod into the hole (``removeFromSlice``), and ``updatePod`` — every update of a bound pod,
a status write included — removes then adds, so the updated pod goes last.

Each case: four 1-CPU pods with the same priority and start time on a 4-CPU node, some
cluster changes, then a 3-CPU preemptor that needs three of them gone. The one pod kept is
the first of the node's list.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from tests.builders import pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LOW,
    Harness,
    both_paths,  # noqa: F401
    node_obj,
    victims_by_node,
)

pytestmark = pytest.mark.usefixtures("both_paths")


def _low(name: str) -> Pod:
    return pod(name).uid(name).priority(LOW).requests(cpu="1").on("node1").build()


def _status_write(h: Harness, name: str) -> None:
    """A write that changes nothing the scheduler accounts for (as a kubelet's)."""
    h.api.patch(
        Pod, name, {"status": {"message": "probed"}}, namespace="default", subresource="status"
    )
    h.pump()


def _delete(h: Harness, name: str) -> None:
    h.force_delete(name)
    h.pump()


@pytest.mark.parametrize(
    ("changes", "kept"),
    [
        pytest.param([], "a", id="creation order: the first pod is kept"),
        pytest.param(
            [("write", "a")], "d", id="a status write sends the pod last, the last takes its place"
        ),
        pytest.param([("write", "d")], "a", id="a status write on the last pod moves nothing"),
        pytest.param(
            [("write", "a"), ("write", "d")], "a", id="two writes: d goes last again, a back first"
        ),
        pytest.param(
            [("delete", "a"), ("add", "e")], "d", id="a deletion moves the last pod into the hole"
        ),
        pytest.param(
            [("delete", "b"), ("add", "e")], "a", id="the hole is filled, the new pod appended"
        ),
    ],
)
def test_equal_victims_are_reprieved_in_upstreams_node_order(
    changes: list[tuple[str, str]], kept: str
) -> None:
    h = Harness()
    h.add_nodes(node_obj("node1", {"cpu": "4", "memory": "16Gi", "pods": "10"}))
    h.start()
    for name in ("a", "b", "c", "d"):
        h.add_pod(_low(name), start=0)
    for action, name in changes:
        if action == "write":
            _status_write(h, name)
        elif action == "delete":
            _delete(h, name)
        else:
            h.add_pod(_low(name), start=0)
    on_node = sorted(p.pod.metadata.name or "" for p in h.scheduler.node_infos()[0].pods)
    candidates, _ = h.dry_run(pod("high").uid("high").priority(HIGH).requests(cpu="3").build())
    victims, violations = victims_by_node(candidates)["node1"]
    assert violations == 0
    assert victims == [name for name in on_node if name != kept]
