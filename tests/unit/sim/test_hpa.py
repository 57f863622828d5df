"""HorizontalPodAutoscalers in ``kubeprio simulate`` (``examples/hpa-scale-up``).

The user story: with static ``kubeprio.io/usage`` the autoscaler still drives a
high-priority Deployment to its steady state, and the replicas it adds preempt the pods of
a lower class, for every seed. The run ends once the autoscaler can change nothing more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.manifest import Document
from kubeprio.api.serialization import to_dict
from kubeprio.cli.manifests import read_documents
from kubeprio.sim.simulate import simulate

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "hpa-scale-up"


def run(seed: int) -> tuple[dict, object]:
    documents = read_documents([str(EXAMPLE)])
    assert all(isinstance(d, Document) for d in documents)
    return simulate([d for d in documents if isinstance(d, Document)], seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_scale_up_preempts_the_lower_class(seed: int) -> None:
    report, cluster = run(seed)
    rescales = [
        (e["time"], e["message"]) for e in report["events"] if e["reason"] == "SuccessfulRescale"
    ]
    reason = "cpu resource utilization (percentage of request) above target"
    assert rescales == [
        (15.0, f"New size: 3; reason: {reason}"),
        (30.0, f"New size: 4; reason: {reason}"),
    ]
    victims = sorted(v for p in report["preemptions"] for v in p["victims"])
    assert len(victims) == 2
    assert all(v.startswith("default/crunch-") for v in victims)
    assert {p["preemptor"].split("/")[1].rsplit("-", 2)[0] for p in report["preemptions"]} == {
        "web"
    }
    running_web = [
        p for p in report["pods"] if p["name"].startswith("web-") and p["phase"] == "Running"
    ]
    assert len(running_web) == 4
    pending_crunch = [
        p for p in report["pods"] if p["name"].startswith("crunch-") and p["phase"] == "Pending"
    ]
    assert len(pending_crunch) == 2
    hpa = cluster.api.get(HorizontalPodAutoscaler, "web", "default")  # type: ignore[attr-defined]
    status = to_dict(hpa)["status"]
    assert (status["currentReplicas"], status["desiredReplicas"]) == (4, 4)
    assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 180
    limited = next(c for c in status["conditions"] if c["type"] == "ScalingLimited")
    assert (limited["status"], limited["reason"]) == ("True", "TooManyReplicas")


def test_the_run_ends_after_the_autoscalers_idle_horizon() -> None:
    report, _ = run(0)
    # The autoscaler resyncs forever; the run still ends, once nothing changed for its
    # idle horizon (a 15 s sync, the 300 s scale-down window, another sync).
    assert 330 < report["endTime"] < 600
