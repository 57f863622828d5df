"""Layout of the HTML report's timeline: lanes per node, bars per pod, preemption arrows.

Pure computation over the report dict of ``sim.report`` (no markup; ``sim.svg`` draws
what this module lays out). A pod's bar runs on its node's lane from ``scheduledAt``
to the first of ``finishedAt``, ``deletedAt`` and the end of the run; the part after
``terminatingAt`` is its graceful termination (it still holds the node's resources). A
preemptor's bar is preceded by its wait on the nominated node, from the preemption to
its binding. Bars that overlap in time go on separate rows of the lane (greedy interval
packing in a fixed order, so the layout is deterministic). Pods never scheduled go on a
last "pending" lane. Very large runs show a bounded number of lanes, nodes involved in
preemptions first.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Mapping, Sequence
from typing import Any, Final

MAX_LANES: Final = 60
"""Node lanes drawn at most (a 5,000-node run would make an unreadable page)."""

MAX_PENDING_BARS: Final = 40
"""Pods drawn at most on the pending lane (the tables list them all)."""

PENDING_LANE: Final = ""
"""The node name of the lane of pods never scheduled."""


@dataclasses.dataclass(frozen=True, slots=True)
class Bar:
    """One pod's stay on a node (or its wait on the pending lane)."""

    key: str
    pod: Mapping[str, Any]
    start: float
    end: float
    terminating: float | None
    waiting_from: float | None
    row: int

    @property
    def begin(self) -> float:
        """Where the pod's drawing begins: its wait as a preemptor, else its start."""
        return self.start if self.waiting_from is None else self.waiting_from


@dataclasses.dataclass(frozen=True, slots=True)
class Lane:
    """One node (or the pending lane) with its bars packed into rows."""

    node: str
    allocatable: Mapping[str, str]
    rows: int
    bars: tuple[Bar, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Arrow:
    """A preemption: from the preemptor to one victim, at the preemption time.

    Both are on the lane of the preemption's node; a row is None when that pod has no
    bar there (a preemptor that never bound there, a victim not seen on the node).
    ``index`` is the preemption's position in the report's ``preemptions``.
    """

    index: int
    time: float
    preemptor: str
    victim: str
    lane: int
    source_row: int | None
    target_row: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class Timeline:
    """Everything ``sim.svg`` needs to draw the timeline."""

    span: float
    lanes: tuple[Lane, ...]
    arrows: tuple[Arrow, ...]
    hidden_nodes: int
    hidden_pending: int


def pod_key(pod: Mapping[str, Any]) -> str:
    """``namespace/name``, as preemptions name pods."""
    return f"{pod['namespace']}/{pod['name']}"


def pod_end(pod: Mapping[str, Any], end_time: float) -> float:
    """When the pod stopped holding its node: finished, deleted or the end of the run."""
    ends = [t for t in (pod.get("finishedAt"), pod.get("deletedAt")) if t is not None]
    return float(min([*ends, end_time]))


def _pack(node: str, allocatable: Mapping[str, str], bars: list[Bar]) -> Lane:
    """Greedy interval packing: each bar, in start order, takes the lowest row free then."""
    bars.sort(key=lambda b: (b.begin, b.end, b.key))
    busy: list[tuple[float, int]] = []
    free: list[int] = []
    placed = []
    rows = 0
    for bar in bars:
        while busy and busy[0][0] <= bar.begin:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            row = heapq.heappop(free)
        else:
            row, rows = rows, rows + 1
        heapq.heappush(busy, (bar.end, row))
        placed.append(dataclasses.replace(bar, row=row))
    return Lane(node=node, allocatable=allocatable, rows=rows, bars=tuple(placed))


def _shown_nodes(report: Mapping[str, Any], names: list[str]) -> list[str]:
    if len(names) <= MAX_LANES:
        return names
    involved = sorted({p["node"] for p in report["preemptions"] if p["node"] in names})
    chosen = set(involved)
    rest = [n for n in names if n not in chosen]
    return sorted((involved + rest)[:MAX_LANES])


def _bar(pod: Mapping[str, Any], end_time: float, preempted_at: float | None) -> Bar:
    start = float(pod["scheduledAt"])
    end = max(start, pod_end(pod, end_time))
    terminating = pod.get("terminatingAt")
    return Bar(
        key=pod_key(pod),
        pod=pod,
        start=start,
        end=end,
        terminating=terminating if terminating is not None and terminating < end else None,
        waiting_from=preempted_at if preempted_at is not None and preempted_at < start else None,
        row=0,
    )


def layout(report: Mapping[str, Any]) -> Timeline:
    """Lay out the timeline of ``report`` (the dict of ``sim.report.build_report``)."""
    end_time = float(report["endTime"])
    preempted_at: dict[str, float] = {}
    for item in report["preemptions"]:
        preempted_at.setdefault(item["preemptor"], item["time"])
    allocatable = {n["name"]: n.get("allocatable") or {} for n in report.get("nodes", [])}
    names = sorted(set(allocatable) | {p["node"] for p in report["pods"] if p["node"]})
    shown = _shown_nodes(report, names)
    bars: dict[str, list[Bar]] = {name: [] for name in shown}
    pending: list[Bar] = []
    for pod in report["pods"]:
        if pod["node"] and pod["scheduledAt"] is not None:
            if pod["node"] in bars:
                bars[pod["node"]].append(_bar(pod, end_time, preempted_at.get(pod_key(pod))))
        elif not pod["deleted"] and pod["phase"] == "Pending":
            created = float(pod.get("createdAt") or 0.0)
            pending.append(
                Bar(pod_key(pod), pod, created, max(created, end_time), None, None, row=0)
            )
    lanes = [_pack(name, allocatable.get(name, {}), bars[name]) for name in shown]
    # The longest waiting first; a pending lane as tall as a 100k-pod backlog helps nobody.
    pending.sort(key=lambda b: (b.start, b.key))
    if pending:
        lanes.append(_pack(PENDING_LANE, {}, pending[:MAX_PENDING_BARS]))
    span = max([end_time, *(b.end for lane in lanes for b in lane.bars)])
    return Timeline(
        span=span if span > 0 else 1.0,
        lanes=tuple(lanes),
        arrows=tuple(_arrows(report, lanes)),
        hidden_nodes=len(names) - len(shown),
        hidden_pending=max(0, len(pending) - MAX_PENDING_BARS),
    )


def _arrows(report: Mapping[str, Any], lanes: Sequence[Lane]) -> list[Arrow]:
    lane_of = {lane.node: index for index, lane in enumerate(lanes)}
    bars: dict[tuple[str, str], list[Bar]] = {}
    for lane in lanes:
        for bar in lane.bars:
            bars.setdefault((lane.node, bar.key), []).append(bar)

    def find(key: str, node: str, time: float) -> int | None:
        """The row of ``key``'s bar on ``node`` alive at ``time`` (else its first bar)."""
        candidates = bars.get((node, key), [])
        for bar in candidates:
            if bar.begin <= time <= bar.end:
                return bar.row
        return candidates[0].row if candidates else None

    arrows = []
    for index, item in enumerate(report["preemptions"]):
        lane_index = lane_of.get(item["node"])
        if lane_index is None:
            continue
        source = find(item["preemptor"], item["node"], item["time"])
        for victim in item["victims"]:
            target = find(victim, item["node"], item["time"])
            arrows.append(
                Arrow(
                    index=index,
                    time=item["time"],
                    preemptor=item["preemptor"],
                    victim=victim,
                    lane=lane_index,
                    source_row=source,
                    target_row=target,
                )
            )
    return arrows
