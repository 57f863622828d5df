"""``kubeprio simulate --admission-control-config-file``: the ResourceQuota plugin's
``limitedResources`` in a simulation, as kube-apiserver's flag sets them.

Upstream rule (``plugin/pkg/admission/resourcequota/controller.go``, ``CheckRequest``):
a pod matching a ``limitedResources`` entry is admitted only in a namespace where a
ResourceQuota covers the matched scopes; elsewhere it is refused with ``insufficient
quota to match these scopes: [...]``, a plain Go error (500, no reason, no ``pods "x" is
forbidden:`` prefix) that a simulation reports among its rejections. This
is upstream's recipe for "limit Priority Class consumption by default": pods of a
privileged class only where an administrator granted a quota for it.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from kubeprio.cli import main

ADMISSION_CONFIGURATION = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: PriorityClass
        operator: In
        values: [cluster-services]
"""

MANIFESTS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: cluster-services}
value: 1000000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Namespace
metadata: {name: kube-system}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: pods-cluster-services, namespace: kube-system}
spec:
  hard: {pods: "10"}
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In, values: [cluster-services]}
---
apiVersion: v1
kind: Pod
metadata: {name: dns, namespace: kube-system}
spec:
  priorityClassName: cluster-services
  containers: [{name: c, image: pause}]
---
apiVersion: v1
kind: Pod
metadata: {name: sneaky, namespace: default}
spec:
  priorityClassName: cluster-services
  containers: [{name: c, image: pause}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  containers: [{name: c, image: pause}]
"""


def _simulate(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    manifests = tmp_path / "cluster.yaml"
    manifests.write_text(MANIFESTS)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["simulate", str(manifests), "--output", "json", *extra])
    return code, (json.loads(out.getvalue()) if code == 0 else None), err.getvalue()


def _placed(report: dict[str, Any]) -> set[str]:
    return {f"{p['namespace']}/{p['name']}" for p in report["pods"] if p["node"]}


def test_a_limited_class_is_refused_where_no_quota_covers_it(tmp_path: Path) -> None:
    config = tmp_path / "admission.yaml"
    config.write_text(ADMISSION_CONFIGURATION)
    code, report, _ = _simulate(tmp_path, "--admission-control-config-file", str(config))
    assert code == 0
    assert report is not None
    assert report["rejected"] == [
        {
            "kind": "Pod",
            "namespace": "default",
            "name": "sneaky",
            "code": 500,
            "reason": "",
            "message": "insufficient quota to match these scopes: "
            "[{PriorityClass In [cluster-services]}]",
        }
    ]
    assert _placed(report) == {"kube-system/dns", "default/plain"}


def test_without_the_file_the_class_is_not_limited(tmp_path: Path) -> None:
    code, report, _ = _simulate(tmp_path)
    assert code == 0
    assert report is not None
    assert report["rejected"] == []
    assert _placed(report) == {"kube-system/dns", "default/sneaky", "default/plain"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: KubeSchedulerConfiguration\n", "expected kind AdmissionConfiguration"),
        (
            "kind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration: [1]\n",
            "the ResourceQuota configuration must be a mapping",
        ),
    ],
)
def test_a_bad_admission_configuration_stops_the_run_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    config = tmp_path / "admission.yaml"
    config.write_text(content)
    code, report, err = _simulate(tmp_path, "--admission-control-config-file", str(config))
    assert code == 2
    assert report is None
    assert str(config) in err
    assert message in err
