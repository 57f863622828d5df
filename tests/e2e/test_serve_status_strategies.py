"""``/status`` writes against a live ``kubeprio serve`` with the real kubectl (v1.32):
each kind's status strategy decides what of the metadata the write may change.

Upstream behaviour checked:

* ``kubectl patch pod --subresource=status`` changing a label stores it
  (``podStatusStrategy.PrepareForUpdate``, ``pkg/registry/core/pod/strategy.go``, resets
  the spec and owner references only), while the spec and ownerReferences in the same
  patch are dropped;
* the same patch of a Deployment keeps its labels (``deploymentStatusStrategy`` resets
  ``metadata.labels``) but stores an annotation; the generation does not move
  (``rest.BeforeUpdate``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-status-strategies", ["--nodes", "0"]) as server:
        yield server


def test_pod_status_patch_changes_labels_but_not_spec_or_owners(served):
    namespace = new_namespace(served, "status-pod")
    served.ok("run", "x", "--image=nginx:1.27", "-n", namespace)
    patch = {
        "metadata": {
            "labels": {"a": "b"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "1234"}],
        },
        "spec": {"activeDeadlineSeconds": 30},
    }
    patched = served.ok(
        "patch", "pod", "x", "-n", namespace, "--subresource=status", "--type=merge",
        "-p", json.dumps(patch),
    )  # fmt: skip
    assert patched == "pod/x patched\n"
    pod = served.json("get", "pod", "x", "-n", namespace)
    assert pod["metadata"]["labels"] == {"a": "b", "run": "x"}
    assert "ownerReferences" not in pod["metadata"]
    assert "activeDeadlineSeconds" not in pod["spec"]
    shown = served.ok("get", "pod", "x", "-n", namespace, "-L", "a")
    assert shown.splitlines()[0].split()[-1] == "A"
    assert shown.splitlines()[1].split()[-1] == "b"


def test_deployment_status_patch_keeps_labels_and_stores_annotations(served):
    namespace = new_namespace(served, "status-deploy")
    served.ok("create", "deployment", "web", "--image=nginx:1.27", "-n", namespace)
    before = served.json("get", "deployment", "web", "-n", namespace)
    patch = {"metadata": {"labels": {"a": "b"}, "annotations": {"note": "x"}}}
    served.ok(
        "patch", "deployment", "web", "-n", namespace, "--subresource=status",
        "--type=merge", "-p", json.dumps(patch),
    )  # fmt: skip
    after = served.json("get", "deployment", "web", "-n", namespace)
    assert after["metadata"]["labels"] == before["metadata"]["labels"] == {"app": "web"}
    assert after["metadata"]["annotations"]["note"] == "x"
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
