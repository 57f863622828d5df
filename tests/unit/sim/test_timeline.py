"""Timeline layout (``sim.timeline``) and the report fields it is drawn from.

A pod holds its node from binding until it finishes, is removed, or the run ends; a
preempted victim keeps its node while it terminates gracefully (semantics §4.8: the
scheduler deletes victims with their own grace period), which the recorder exposes as
``terminatingAt`` and ``deletedAt``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.sim import timeline
from kubeprio.sim.simulate import simulate
from tests.conftest import REPO_ROOT
from tests.unit.sim.reports import node, pod, report


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, 100.0),
        ({"finished": 30.0}, 30.0),
        ({"deleted": 50.0}, 50.0),
        ({"finished": 45.0, "deleted": 50.0, "terminating": 20.0}, 45.0),
        ({"deleted": 500.0}, 100.0),
    ],
    ids=["runs-to-the-end", "finished", "deleted", "first-of-finish-and-delete", "capped"],
)
def test_a_pod_holds_its_node_until_it_finishes_is_removed_or_the_run_ends(
    fields: dict[str, float], expected: float
) -> None:
    layout = timeline.layout(report([pod("p", node="n1", **fields)], end=100.0))
    (bar,) = layout.lanes[0].bars
    assert (bar.start, bar.end) == (0.0, expected)


@pytest.mark.parametrize(
    ("intervals", "rows"),
    [
        ([(0, 10), (10, 20)], [0, 0]),
        ([(0, 10), (5, 20)], [0, 1]),
        ([(0, 10), (5, 20), (12, 30)], [0, 1, 0]),
        ([(0, 50), (5, 8), (6, 9), (8, 12)], [0, 1, 2, 1]),
    ],
    ids=["back-to-back-share", "overlap-splits", "freed-row-reused", "lowest-free-row"],
)
def test_overlapping_pods_get_separate_rows(
    intervals: list[tuple[float, float]], rows: list[int]
) -> None:
    pods = [
        pod(f"p{i}", node="n1", scheduled=start, finished=end)
        for i, (start, end) in enumerate(intervals)
    ]
    (lane,) = timeline.layout(report(pods, nodes=[node("n1")])).lanes
    assert {b.key: b.row for b in lane.bars} == {f"default/p{i}": row for i, row in enumerate(rows)}
    assert lane.rows == max(rows) + 1


def test_nodes_without_pods_get_lanes_and_unscheduled_pods_the_last_lane() -> None:
    data = report(
        [pod("waiting", created=7.0), pod("gone", created=1.0, deleted=2.0)],
        nodes=[node("b"), node("a")],
    )
    layout = timeline.layout(data)
    assert [lane.node for lane in layout.lanes] == ["a", "b", timeline.PENDING_LANE]
    (bar,) = layout.lanes[-1].bars
    assert (bar.key, bar.start, bar.end) == ("default/waiting", 7.0, 100.0)


def test_a_preemption_arrow_joins_preemptor_and_victim_rows_on_the_node() -> None:
    data = report(
        [
            pod("victim", node="n1", priority=1, terminating=10.0, deleted=40.0),
            pod("other", node="n1", priority=1),
            pod("preemptor", node="n1", priority=9, created=10.0, scheduled=40.0),
        ],
        nodes=[node("n1")],
        preemptions=[
            {"time": 10.0, "preemptor": "default/preemptor", "node": "n1",
             "victims": ["default/victim"]},
        ],
    )  # fmt: skip
    layout = timeline.layout(data)
    bars = {b.key: b for b in layout.lanes[0].bars}
    assert bars["default/victim"].terminating == 10.0
    assert bars["default/preemptor"].waiting_from == 10.0  # nominated, waits 30 s
    (arrow,) = layout.arrows
    assert arrow.lane == 0
    assert arrow.source_row == bars["default/preemptor"].row
    assert arrow.target_row == bars["default/victim"].row
    assert arrow.source_row != arrow.target_row


def test_a_preemptor_that_never_bound_there_starts_its_arrow_at_the_lane() -> None:
    data = report(
        [pod("victim", node="n1", terminating=5.0, deleted=6.0), pod("preemptor", created=5.0)],
        nodes=[node("n1")],
        preemptions=[
            {"time": 5.0, "preemptor": "default/preemptor", "node": "n1",
             "victims": ["default/victim"]},
        ],
    )  # fmt: skip
    (arrow,) = timeline.layout(data).arrows
    assert arrow.source_row is None
    assert arrow.target_row == 0


def test_big_runs_show_bounded_lanes_with_preemption_nodes_first() -> None:
    count = timeline.MAX_LANES + 40
    names = [f"n{i:03d}" for i in range(count)]
    data = report(
        [pod("victim", node="n099", deleted=3.0)]
        + [pod(f"w{i}", created=float(i)) for i in range(timeline.MAX_PENDING_BARS + 5)],
        nodes=[node(n) for n in names],
        preemptions=[
            {"time": 1.0, "preemptor": "default/x", "node": "n099", "victims": ["default/victim"]}
        ],
    )
    layout = timeline.layout(data)
    shown = [lane.node for lane in layout.lanes if lane.node]
    assert len(shown) == timeline.MAX_LANES
    assert "n099" in shown
    assert shown == sorted(shown)
    assert layout.hidden_nodes == 40
    assert len(layout.lanes[-1].bars) == timeline.MAX_PENDING_BARS
    assert layout.hidden_pending == 5
    assert len(layout.arrows) == 1


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    root = REPO_ROOT / "examples" / "report-demo"
    documents: list[manifest.Document] = []
    for path in sorted(root.glob("*.yaml")):
        documents += manifest.parse_text(path.read_text(), str(path))
    result, _cluster = simulate(documents, seed=0)
    return result


def test_report_records_when_victims_terminate_and_are_removed(demo: dict[str, Any]) -> None:
    pods = {f"{p['namespace']}/{p['name']}": p for p in demo["pods"]}
    for item in demo["preemptions"]:
        for key in item["victims"]:
            victim = pods[key]
            assert victim["terminatingAt"] == item["time"]
            # kubeprio.io/termination-seconds: "20" in the Job template.
            assert victim["deletedAt"] == item["time"] + 20
            assert victim["finishedAt"] == item["time"] + 20
        # The preemptor binds once its victims are gone.
        assert pods[item["preemptor"]]["scheduledAt"] == item["time"] + 20


def test_report_records_finished_pods_and_lists_nodes(demo: dict[str, Any]) -> None:
    done = [p for p in demo["pods"] if p["phase"] == "Succeeded"]
    assert done
    for p in done:
        # kubeprio.io/duration: 10m
        assert p["finishedAt"] == p["scheduledAt"] + 600
        assert p["deletedAt"] is None
        assert p["terminatingAt"] is None
    assert demo["nodes"] == [
        {
            "name": name,
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "createdAt": 0.0,
            "deletedAt": None,
        }
        for name in ("node-a", "node-b", "node-c")
    ]


def test_report_demo_outcome_matches_the_readme(demo: dict[str, Any]) -> None:
    """examples/report-demo, as the README's Simulate section tells it."""
    victims = sorted(v for p in demo["preemptions"] for v in p["victims"])
    assert len(victims) == 4
    assert all(v.startswith("batch/nightly-") for v in victims)
    preemptors = sorted(p["preemptor"].split("-")[0] for p in demo["preemptions"])
    assert preemptors == ["shop/api", "shop/api", "shop/frontend", "shop/frontend"]
    pending = [p for p in demo["pods"] if p["node"] is None and not p["deleted"]]
    assert [(p["name"], p["pendingMessage"]) for p in pending] == [
        (
            "giant",
            "0/3 nodes are available: 3 Insufficient cpu. "
            "preemption: not eligible due to preemptionPolicy=Never.",
        )
    ]
    batch = next(row for row in demo["waiting"] if row["priorityClassName"] == "batch")
    assert (batch["pods"], batch["scheduled"], batch["maxWait"]) == (11, 10, 1120.0)
    assert demo["endTime"] == 1800.0
