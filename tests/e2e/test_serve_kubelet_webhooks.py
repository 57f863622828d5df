"""The kubelet's pod status write waiting on a slow admission webhook holds up nothing else.

On a real node the kubelet's status manager writes each pod's status from a goroutine of
its own (``pkg/kubelet/status/status_manager.go`` ``syncPod``), so a slow validating
webhook on ``pods/status`` delays that write only. kubeprio's simulated kubelets share
``kubeprio serve``'s event loop: the write is parked (``kubelet.statusmanager``,
``client.answeredretry``) and the API service replays it once the answer is in
(``apiserver.controllerwebhooks``). A real HTTPS webhook (``tests.e2e.webhookserver``,
``/sleep/SECONDS/PATH`` answers late) and the real kubectl (v1.32) against a live server.

Upstream rules checked:

* the webhook sees an UPDATE of ``pods/status`` with the Running status, once;
* while it thinks, ``kubectl get`` is answered well within its delay and the pod is not
  Running; after the answer it turns Running, written once.
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
    new_namespace,
    running,
)
from tests.e2e.slowwebhook import answers_while_thinking, install_slow_hook
from tests.e2e.webhookserver import requests_in

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

DELAY = 4.0
"""Seconds the webhook thinks before it allows a status write."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-kubelet-webhooks", ["--nodes", "1"]) as server:
        yield server


def _phase(served: ServeProcess, ns: str) -> str:
    pod = served.json("get", "pod", "web", "-n", ns)
    return str(pod.get("status", {}).get("phase") or "")


def test_a_status_write_through_a_slow_webhook_blocks_no_one_and_is_written_once(served, webhook):
    ns = new_namespace(served, "status-wh")
    path = install_slow_hook(
        served, webhook, ns, "status", DELAY, resource="pods/status", operations=("UPDATE",)
    )
    served.ok("run", "web", "--image=nginx", "-n", ns)

    # The kubelet's Running status waits on the webhook: the server answers anyway.
    _listed, still_thinking = answers_while_thinking(
        served, webhook, path, DELAY, "pods", "-n", ns, "-o", "wide"
    )
    if still_thinking:
        assert _phase(served, ns) != "Running"

    # The answer comes in: the pod turns Running, written once.
    eventually(lambda: _phase(served, ns) == "Running", timeout=30)
    time.sleep(DELAY + 1)  # a second write (and its review) would have had time to land
    [review] = requests_in(webhook, path, ns)
    assert review["operation"] == "UPDATE"
    assert review["subResource"] == "status"
    assert review["object"]["status"]["phase"] == "Running"
    assert _phase(served, ns) == "Running"
