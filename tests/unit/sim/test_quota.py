"""``kubeprio simulate`` enforces ResourceQuotas as a real API server does.

Upstream's ResourceQuota admission (``checkRequest``) refuses a create that would take a
quota's ``status.used`` past its ``status.hard``, with ``exceeded quota: <name>,
requested: ..., used: ..., limited: ...``; the quota controller keeps ``status.used``.
A simulation computes a submitted quota's status at once (docs/design.md), so the
objects after it in the input are charged to it; those before it are counted, not refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.serialization import to_dict
from kubeprio.sim.simulate import simulate

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def _quota(hard: str, scope: str = "") -> str:
    return f"""\
apiVersion: v1
kind: ResourceQuota
metadata: {{name: q, namespace: team-a}}
spec:
  hard: {{{hard}}}
{scope}"""


def _pod(name: str, cpu: str = "100m", priority_class: str = "") -> str:
    extra = f"\n  priorityClassName: {priority_class}" if priority_class else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team-a}}
spec:{extra}
  containers:
  - {{name: c, image: x, resources: {{requests: {{cpu: {cpu}}}, limits: {{cpu: {cpu}}}}}}}
"""


def _run(*documents: str) -> tuple[dict[str, Any], Any]:
    text = "---\n".join(documents)
    return simulate(manifest.parse_text(text, "input.yaml"), seed=0)


def _placed(report: dict[str, Any]) -> list[str]:
    return sorted(pod["name"] for pod in report["pods"] if pod.get("node"))


def _refused(report: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["message"] for entry in report["rejected"]}


HIGH_ONLY = """\
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In, values: [high]}
"""


@pytest.mark.parametrize(
    ("quota", "pods", "placed", "refused"),
    [
        pytest.param(
            _quota('pods: "1"'),
            [_pod("a"), _pod("b")],
            ["a"],
            {
                "b": 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, '
                "used: pods=1, limited: pods=1"
            },
            id="object count: the second pod exceeds pods=1",
        ),
        pytest.param(
            _quota('requests.cpu: "1"'),
            [_pod("a", "600m"), _pod("b", "600m"), _pod("c", "400m")],
            ["a", "c"],
            {
                "b": 'pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=600m, '
                "used: requests.cpu=600m, limited: requests.cpu=1"
            },
            id="compute: a refused pod charges nothing, a smaller one still fits",
        ),
        pytest.param(
            _quota('pods: "0"', HIGH_ONLY),
            [_pod("plain"), _pod("urgent", priority_class="high")],
            ["plain"],
            {
                "urgent": 'pods "urgent" is forbidden: exceeded quota: q, requested: pods=1, '
                "used: pods=0, limited: pods=0"
            },
            id="PriorityClass scope: only pods of the class are limited",
        ),
    ],
)
def test_quota_refuses_what_upstream_admission_refuses(
    quota: str, pods: list[str], placed: list[str], refused: dict[str, str]
) -> None:
    report, _ = _run(NODE, quota, *pods)
    assert _placed(report) == placed
    assert _refused(report) == refused


def test_objects_before_the_quota_are_counted_not_refused() -> None:
    """Upstream never refuses what exists: the quota's usage may exceed its hard limit."""
    report, cluster = _run(NODE, _pod("a"), _pod("b"), _quota('pods: "1"'), _pod("c"))
    assert _placed(report) == ["a", "b"]
    assert list(_refused(report)) == ["c"]
    status = to_dict(cluster.api.get(ResourceQuota, "q", "team-a"))["status"]
    assert (status["hard"], status["used"]) == ({"pods": "1"}, {"pods": "2"})


def test_refused_replicas_are_failed_create_events_of_their_replica_set() -> None:
    deployment = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x}]
"""
    report, _ = _run(NODE, _quota('pods: "2"'), deployment)
    assert len(_placed(report)) == 2
    assert report["rejected"] == []
    failed = [e for e in report["events"] if e["reason"] == "FailedCreate"]
    assert failed
    assert all(e["object"].startswith("ReplicaSet/team-a/web-") for e in failed)
    assert all("exceeded quota: q, requested: pods=1, used: pods=2" in e["message"] for e in failed)


def test_same_seed_same_report_with_quotas() -> None:
    documents = (NODE, _quota('pods: "2"'), _pod("a"), _pod("b"), _pod("c"))
    assert _run(*documents)[0] == _run(*documents)[0]


def _cron_job(name: str, schedule: str = "*/10 * * * *") -> str:
    return f"""\
apiVersion: batch/v1
kind: CronJob
metadata: {{name: {name}, namespace: team-a}}
spec:
  schedule: "{schedule}"
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {{kubeprio.io/duration: 60s}}
        spec:
          restartPolicy: Never
          containers: [{{name: c, image: x}}]
"""


def test_cron_jobs_are_counted_and_their_jobs_refused_as_failed_create() -> None:
    """count/cronjobs.batch refuses a second CronJob (upstream's object count evaluator);
    count/jobs.batch refuses the CronJob's second Job, which the CronJob controller reports
    as FailedCreate "Error creating job: ..." and retries."""
    quota = _quota('"count/cronjobs.batch": "1", "count/jobs.batch": "1"')
    text = "---\n".join((NODE, quota, _cron_job("a"), _cron_job("b")))
    report, cluster = simulate(manifest.parse_text(text, "input.yaml"), seed=0, until=1500)
    assert [entry["name"] for entry in report["rejected"]] == ["b"]
    assert (
        "exceeded quota: q, requested: count/cronjobs.batch=1" in report["rejected"][0]["message"]
    )
    created = [e for e in report["events"] if e["reason"] == "SuccessfulCreate"]
    assert [e["time"] for e in created if e["object"] == "CronJob/team-a/a"] == [600.0]
    failed = [e for e in report["events"] if e["reason"] == "FailedCreate"]
    assert failed
    assert failed[0]["time"] == 1200.0
    assert failed[0]["object"] == "CronJob/team-a/a"
    assert failed[0]["message"].startswith('Error creating job: jobs.batch "a-')
    status = to_dict(cluster.api.get(ResourceQuota, "q", "team-a"))["status"]
    assert status["used"] == {"count/cronjobs.batch": "1", "count/jobs.batch": "1"}
