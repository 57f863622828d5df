"""``kubeprio bench``: every workload, at a small size, proves its work was done.

The benchmarks' figures are only worth something if each run did what its name says
(upstream's scheduler_perf shapes, reference/performance-anchors.md §1.2): these tests
run each workload through the CLI at a size that takes well under a second and check the
counts its JSON reports, not its timings.
"""

from __future__ import annotations

import json

import pytest

from kubeprio.cli import main

SMALL = ["--nodes", "20", "--seed", "3"]


def _bench(capsys: pytest.CaptureFixture[str], workload: str, *sizes: str) -> dict[str, object]:
    assert main(["bench", workload, *SMALL, *sizes]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    assert result["workload"] == workload
    return result


def test_scheduling_basic_binds_every_measured_pod(capsys: pytest.CaptureFixture[str]) -> None:
    result = _bench(capsys, "scheduling-basic", "--init-pods", "10", "--pods", "60")
    assert (result["scheduled"], result["preempted"], result["pods"]) == (60, 0, 60)


def test_preemption_basic_binds_every_preemptor_by_preempting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 4 x 900m low-priority pods fill each 4-CPU node; a 3-CPU preemptor fits on a node
    # only once three of them are gone: one preemption per preemptor, one per node.
    result = _bench(capsys, "preemption-basic", "--init-pods", "80", "--pods", "20")
    assert (result["scheduled"], result["preempted"]) == (20, 20)
    assert result["preemptions_per_s"]


def test_unschedulable_searches_and_preempts_nobody(capsys: pytest.CaptureFixture[str]) -> None:
    # A 9-CPU pod fits no 4-CPU node even with every lower-priority pod gone (seed 000):
    # each attempt runs a failed preemption search and evicts no one.
    result = _bench(capsys, "unschedulable", "--init-pods", "40", "--pods", "15")
    assert (result["attempts"], result["unschedulable"], result["preempted"]) == (15, 15, 0)
    assert result["scheduled"] == 40  # the running pods only


def test_preemption_async_counts_regular_pods_while_preemptors_arrive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Upstream's PreemptionAsync counts the measured (regular) pods; its churn creates a
    # preemptor every 200 ms, here one after every 110 regular bindings.
    result = _bench(capsys, "preemption-async", "--init-pods", "80", "--pods", "40")
    assert (result["scheduled"], result["pods"], result["preemptors_created"]) == (40, 40, 0)
    result = _bench(
        capsys, "preemption-async", "--nodes", "120", "--init-pods", "480", "--pods", "230"
    )
    # Two preemptors arrived (after 110 and 220 regular bindings); each preempted as soon
    # as it was popped, ahead of the regular pods (priority 10 against 0).
    assert (result["scheduled"], result["preemptors_created"], result["preempted"]) == (230, 2, 2)


def test_scale_binds_every_pod(capsys: pytest.CaptureFixture[str]) -> None:
    result = _bench(capsys, "scale-150k", "--pods", "200")
    assert (result["scheduled"], result["preempted"]) == (200, 0)
    assert isinstance(result["peak_rss_bytes"], int)
