"""ComponentStatus and API Priority and Fairness against a live ``kubeprio serve``, with
the real kubectl (v1.32) and the official Python client.

One server for the module. Rules checked: ``componentstatuses`` as
``pkg/registry/core/componentstatus/rest.go`` serves it over storage_core.go's servers
(``controller-manager``, ``scheduler``, ``etcd-0``), kubectl's deprecation warning and
``printComponentStatus``'s NAME STATUS MESSAGE ERROR; an unknown component's plain error.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    needs_kubectl,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-apf", ["--nodes", "1"]) as server:
        yield server


def test_kubectl_get_cs_warns_and_prints_every_component(served):
    result = served.kubectl("get", "cs")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
    assert table_rows(result.stdout) == [
        ["NAME", "STATUS", "MESSAGE", "ERROR"],
        ["controller-manager", "Healthy", "ok"],
        ["scheduler", "Healthy", "ok"],
        ["etcd-0", "Healthy", "ok"],
    ]


def test_kubectl_get_an_unknown_component(served):
    result = served.kubectl("get", "componentstatus", "nope")
    assert result.returncode == 1
    assert result.stderr.endswith("Error from server: Component not found: nope\n")


def test_python_client_lists_component_statuses(served):
    with served.client() as api:
        listed = k8s.CoreV1Api(api).list_component_status()
        names = [item.metadata.name for item in listed.items]
        assert names == ["controller-manager", "scheduler", "etcd-0"]
        one = k8s.CoreV1Api(api).read_component_status("scheduler")
        assert [(c.type, c.status, c.message) for c in one.conditions] == [
            ("Healthy", "True", "ok")
        ]
