"""CronJobs against a live ``kubeprio serve`` with the real kubectl (v1.32) and the
official Python client.

``kubectl create cronjob`` (a protobuf body), ``get cj`` (``printCronJob``: NAME SCHEDULE
TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, wide CONTAINERS IMAGES SELECTOR), ``get all``
(category ``all``), ``describe cj``, ``explain cronjob.spec``, ``patch`` of ``suspend``,
``create job --from=cronjob/x`` (kubectl reads the CronJob and creates a Job owned by it),
a refused schedule with upstream's text, a tenant's forbidden class in the job template,
and the controller in real time: an ``@every 2s`` schedule creates a Job named
``<cronjob>-<minutes>`` whose pod runs, without waiting for a minute boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

ALICE = "kubeprio-alice"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-cj", ["--preset", "kestrel", "--nodes", "2"]) as server:
        yield server


def test_create_get_describe_explain_patch_and_create_job_from(served: ServeProcess) -> None:
    created = served.ok(
        "create", "cronjob", "hourly", "--image=busybox:1.36", "--schedule=0 * * * *",
        "--", "echo", "hi",
    )  # fmt: skip
    assert created.strip() == "cronjob.batch/hourly created"
    header = served.ok("get", "cj").splitlines()[0].split()
    assert header == [
        "NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE",
    ]  # fmt: skip
    row = table_rows(served.ok("get", "cj", "hourly"))[1]
    assert row[:9] == ["hourly", "0", "*", "*", "*", "*", "<none>", "False", "0"]
    assert row[9] == "<none>"
    wide = table_rows(served.ok("get", "cronjobs", "hourly", "-o", "wide"))
    assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][-3:] == ["hourly", "busybox:1.36", "<none>"]
    assert "cronjob.batch/hourly" in served.ok("get", "all")
    stored = served.json("get", "cj", "hourly")
    assert stored["spec"]["concurrencyPolicy"] == "Allow"
    assert stored["spec"]["successfulJobsHistoryLimit"] == 3
    assert stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == (
        "OnFailure"
    )
    describe = served.ok("describe", "cj", "hourly")
    assert "Schedule:                      0 * * * *" in describe
    assert "Concurrency Policy:            Allow" in describe
    assert "Suspend:                       False" in describe
    explain = served.ok("explain", "cronjob.spec")
    assert "schedule\t<string> -required-" in explain
    assert "concurrencyPolicy\t<string>" in explain
    patched = served.ok("patch", "cj", "hourly", "-p", '{"spec":{"suspend":true}}')
    assert patched.strip() == "cronjob.batch/hourly patched"
    assert table_rows(served.ok("get", "cj", "hourly"))[1][7] == "True"
    job = served.ok("create", "job", "manual", "--from=cronjob/hourly")
    assert job.strip() == "job.batch/manual created"
    made = served.json("get", "job", "manual")
    assert made["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    [owner] = made["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "CronJob",
        "hourly",
        stored["metadata"]["uid"],
    )
    eventually(lambda: served.json("get", "job", "manual").get("status", {}).get("active"))


def test_a_bad_schedule_is_refused_with_upstreams_text(served: ServeProcess) -> None:
    result = served.kubectl("create", "cronjob", "bad", "--image=busybox", "--schedule=*/0 * * * *")
    assert result.returncode != 0
    assert result.stderr == (
        'error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: '
        'Invalid value: "*/0 * * * *": step of range should be a positive number: */0\n'
    )


def test_the_controller_creates_jobs_in_real_time(served: ServeProcess) -> None:
    """``@every 2s``: the first Job ``tick-<minutes>`` is made two seconds after creation
    (the controller's requeue is a real-time wakeup), its pod runs, and the CronJob's
    status lists it as active with a last schedule time."""
    served.ok("create", "namespace", "ticking")
    manifest = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: ticking}
spec:
  schedule: "@every 2s"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - {name: tick, image: busybox, resources: {requests: {cpu: 100m}}}
"""
    served.ok("apply", "-f", "-", stdin=manifest)

    def job() -> dict[str, Any] | None:
        items: list[dict[str, Any]] = served.json("get", "jobs", "-n", "ticking")["items"]
        return items[0] if items else None

    first = eventually(job)
    assert first["metadata"]["name"].startswith("tick-")
    assert first["metadata"]["name"].removeprefix("tick-").isdigit()
    assert "batch.kubernetes.io/cronjob-scheduled-timestamp" in first["metadata"]["annotations"]

    def running() -> bool:
        pods = served.json("get", "pods", "-n", "ticking")["items"]
        return any(p["status"].get("phase") == "Running" for p in pods)

    eventually(running)
    status = eventually(lambda: served.json("get", "cj", "tick", "-n", "ticking").get("status"))
    assert status["lastScheduleTime"]
    row = table_rows(served.ok("get", "cj", "tick", "-n", "ticking"))[1]
    assert row[0] == "tick"
    served.ok("delete", "cj", "tick", "-n", "ticking")
    eventually(lambda: not served.json("get", "jobs", "-n", "ticking")["items"])


def test_a_tenant_may_not_template_a_forbidden_class(served: ServeProcess) -> None:
    manifest = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: sneaky, namespace: kestrel-research}
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          priorityClassName: uber-infra-critical
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
"""
    result = served.kubectl("apply", "-f", "-", stdin=manifest, context=ALICE)
    assert result.returncode != 0
    assert (
        'cronjobs.batch "sneaky" is forbidden: pod template: PriorityClass '
        '"uber-infra-critical" is not allowed in namespace "kestrel-research"'
    ) in result.stderr


def test_the_official_python_client_reads_a_cron_job(served: ServeProcess) -> None:
    served.ok(
        "create", "cronjob", "py", "--image=busybox", "--schedule=30 2 * * *", "-n", "default",
    )  # fmt: skip
    with served.client() as api:
        batch = k8s.BatchV1Api(api)
        cron_job = batch.read_namespaced_cron_job("py", "default")
        assert cron_job.spec.schedule == "30 2 * * *"
        assert cron_job.spec.concurrency_policy == "Allow"
        assert cron_job.spec.suspend is False
        assert cron_job.spec.job_template.spec.template.spec.restart_policy == "OnFailure"
        names = [c.metadata.name for c in batch.list_namespaced_cron_job("default").items]
        assert "py" in names
