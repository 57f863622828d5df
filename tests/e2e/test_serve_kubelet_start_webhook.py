"""A kubelet's start waiting on a slow admission webhook holds up nothing else.

Upstream a kubelet registers its Node and posts its first status from goroutines of its
own (``pkg/kubelet/kubelet_node_status.go``), so a slow validating webhook on
``nodes/status`` delays that kubelet only. kubeprio's simulated kubelets share
``kubeprio serve``'s event loop: the start's write is parked (``Kubelet.start``,
``client.answeredretry``) and the API service replays it once the answer is in. A real
HTTPS webhook (``tests.e2e.webhookserver``, ``/sleep/SECONDS/PATH`` answers late) and
the real kubectl (v1.32) against a live server.

Upstream rules checked: ``kubectl create`` of a Node without conditions or labels starts
its kubelet, which patches ``nodes/status`` twice (``tryRegisterWithAPIServer``: its
default labels and annotation; then ``tryUpdateNodeStatus``: Ready), each an UPDATE the
webhook sees once;
while the webhook thinks, ``kubectl create`` and ``kubectl get`` are answered well within
its delay and the Node reports no Ready condition; after the answer it is Ready.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    running,
)
from tests.e2e.slowwebhook import answers_while_thinking
from tests.e2e.webhookserver import (
    WebhookServer,
    namespaced_hook,
    requests_on,
    webhook_configuration,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

DELAY = 4.0
"""Seconds the webhook thinks before it allows a node status write."""
LABEL = "kubeprio.test/slow-status"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-kubelet-start-webhook", ["--nodes", "1"]) as server:
        yield server


def _configuration(url: str, ca: str) -> str:
    """Node status updates of Nodes labelled ``LABEL`` only (the other nodes' writes go
    on without the webhook; a Node has no namespace, so no namespace selector)."""
    hook = namespaced_hook(
        "slow-node-status.kubeprio.test",
        url,
        ca,
        namespace="",
        resources=("nodes/status",),
        operations=("UPDATE",),
        namespaceSelector={},
        objectSelector={"matchLabels": {LABEL: "yes"}},
    )
    return webhook_configuration("ValidatingWebhookConfiguration", "slow-node-status", hook)


NODE = f"""\
apiVersion: v1
kind: Node
metadata:
  name: late
  labels: {{{LABEL}: "yes"}}
status:
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _ready(served: ServeProcess) -> str | None:
    node = served.json("get", "node", "late")
    conditions = node.get("status", {}).get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "Ready"), None)


def test_a_kubelet_start_through_a_slow_webhook_blocks_no_one(
    served: ServeProcess, webhook: WebhookServer
) -> None:
    path = f"/sleep/{DELAY:g}/allow-node-status"
    served.ok("create", "-f", "-", stdin=_configuration(webhook.url(path), webhook.ca_bundle))
    # The Node's create is answered at once; its kubelet's start waits on the webhook
    # off the loop (in place, the loop would hold this very response until it answered).
    started = time.monotonic()
    served.ok("create", "-f", "-", stdin=NODE)
    create_latency = time.monotonic() - started

    _listed, still_thinking = answers_while_thinking(served, webhook, path, DELAY, "nodes")
    assert create_latency < DELAY / 2, (
        f"kubectl create took {create_latency:.2f}s while the webhook thought"
    )
    if still_thinking:
        assert _ready(served) is None

    eventually(lambda: _ready(served) == "True", timeout=30)
    registration, status = requests_on(webhook, path)
    for review in (registration, status):
        assert (review["operation"], review["subResource"], review["name"]) == (
            "UPDATE",
            "status",
            "late",
        )
    labels = registration["object"]["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "late"
    assert "conditions" not in registration["object"]["status"]
    ready = [c for c in status["object"]["status"]["conditions"] if c["type"] == "Ready"]
    assert [c["status"] for c in ready] == ["True"]


BUSY_LABEL = "kubeprio.test/slow-busy-status"
BUSY_NODE = f"""\
apiVersion: v1
kind: Node
metadata:
  name: busy
  labels: {{{BUSY_LABEL}: "yes"}}
status:
  capacity: {{cpu: "2", memory: 4Gi, pods: "110"}}
  allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}
"""


def test_a_label_set_while_the_kubelet_writes_its_node_never_conflicts(
    served: ServeProcess, webhook: WebhookServer
) -> None:
    """``PatchNodeStatus`` (``pkg/util/node``) sends no resourceVersion: ``kubectl label
    node`` and the TTL controller's annotation (``ttl_controller.go``) land while the
    kubelet's start patches wait on the webhook, and all three end up on the Node."""
    delay = 3.0
    path = f"/sleep/{delay:g}/allow-busy-status"
    hook = namespaced_hook(
        "slow-busy-status.kubeprio.test",
        webhook.url(path),
        webhook.ca_bundle,
        namespace="",
        resources=("nodes/status",),
        operations=("UPDATE",),
        namespaceSelector={},
        objectSelector={"matchLabels": {BUSY_LABEL: "yes"}},
    )
    configuration = webhook_configuration("ValidatingWebhookConfiguration", "slow-busy", hook)
    served.ok("create", "-f", "-", stdin=configuration)
    served.ok("create", "-f", "-", stdin=BUSY_NODE)
    eventually(lambda: requests_on(webhook, path), timeout=15)
    served.ok("label", "node", "busy", "team=blue")

    def ready() -> dict[str, object] | None:
        node = served.json("get", "node", "busy")
        conditions = node.get("status", {}).get("conditions") or []
        return (
            node
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            else None
        )

    node = eventually(ready, timeout=30)
    metadata = node["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["labels"]["team"] == "blue"
    assert metadata["labels"]["kubernetes.io/hostname"] == "busy"
    assert metadata["annotations"]["node.alpha.kubernetes.io/ttl"] == "0"
    # The label landed while the registration patch was being reviewed: as upstream's
    # patch handler (its patch and admission run inside GuaranteedUpdate's retried
    # update), the patch is applied again to the labelled Node and reviewed again. The
    # status patch then applies to the Node carrying all three writers' fields.
    reviews = requests_on(webhook, path)
    assert {(r["operation"], r["subResource"]) for r in reviews} == {("UPDATE", "status")}
    last = reviews[-1]
    assert last["oldObject"]["metadata"]["labels"]["team"] == "blue"
    assert [c["type"] for c in last["object"]["status"]["conditions"]][-1] == "Ready"
    described = served.ok("describe", "node", "busy")
    assert "node.alpha.kubernetes.io/ttl: 0" in described
