"""A controller's write waiting on a slow admission webhook holds up nothing else.

On a real cluster kube-controller-manager is its own process: a ReplicaSet's pod create
that reaches a slow validating webhook blocks that controller's worker, and the API
server goes on answering everyone else. kubeprio's controllers share ``kubeprio serve``'s
event loop, so the create is deferred (``apiserver.controllerwebhooks``): the review is
posted off the loop, the ReplicaSet requeues its key and its retry, once the answer is
in, creates the pod with it. A real HTTPS webhook (``tests.e2e.webhookserver``,
``/sleep/SECONDS/PATH`` answers late) and the real kubectl (v1.32) against a live server.

Upstream rules checked:

* ``pkg/controller/replicaset/replica_set.go`` ``manageReplicas``/``slowStartBatch``: the
  Deployment's ReplicaSet creates its pods through the webhook, each exactly once, with
  no ``FailedCreate`` event (the create was not refused, only slow);
* ``registry/rest/create.go`` ``BeforeCreate`` and ``webhook/validating/dispatcher.go``:
  each pod is reviewed once, with the ``uid`` it is stored with;
* while the webhook thinks, ``kubectl get`` is answered well within its delay.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

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
from tests.e2e.webhookserver import (
    requests_in,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

DELAY = 4.0
"""Seconds the webhook thinks before it allows a pod."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-controller-webhooks", ["--nodes", "1"]) as server:
        yield server


def _pods(served: ServeProcess, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = served.json("get", "pods", "-n", ns)["items"]
    return items


def test_a_replicaset_creating_pods_through_a_slow_webhook_blocks_no_one(served, webhook):
    ns = new_namespace(served, "ctrl-wh")
    path = install_slow_hook(served, webhook, ns, "pods", DELAY, resource="pods")
    served.ok("create", "deployment", "web", "--image=nginx", "--replicas=3", "-n", ns)

    # The ReplicaSet's first create is waiting on the webhook: the server answers anyway.
    listed, still_thinking = answers_while_thinking(
        served, webhook, path, DELAY, "pods", "-n", ns, "-o", "name"
    )
    if still_thinking:
        assert listed.strip() == ""  # nothing is created before its answer

    # The answers come in; the pods appear, each created once.
    eventually(lambda: len(_pods(served, ns)) == 3, timeout=40)
    time.sleep(DELAY + 1)  # a duplicate create would have had time to land
    pods = _pods(served, ns)
    assert len(pods) == 3
    reviews = requests_in(webhook, path, ns)
    assert sorted(r["object"]["metadata"]["uid"] for r in reviews) == sorted(
        p["metadata"]["uid"] for p in pods
    )
    assert sorted(r["object"]["metadata"]["name"] for r in reviews) == sorted(
        p["metadata"]["name"] for p in pods
    )
    rs = served.json("get", "replicasets", "-n", ns)["items"]
    assert [r["status"].get("replicas") for r in rs] == [3]
    events = served.json("get", "events", "-n", ns)["items"]
    assert not [e for e in events if e["reason"] == "FailedCreate"]
    created = [e for e in events if e["reason"] == "SuccessfulCreate"]
    assert len(created) == 3
