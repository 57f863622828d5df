"""The scheduler's bind waiting on a slow admission webhook holds up nothing else.

On a real cluster kube-scheduler is its own process and binds in a goroutine (the
binding cycle, ``pkg/scheduler/schedule_one.go``), so a slow validating webhook on
``pods/binding`` (``pkg/registry/core/pod/storage/storage.go`` ``BindingREST.Create``
runs it through ``createValidation``) delays that pod only. kubeprio's scheduler shares
``kubeprio serve``'s event loop: its bind is deferred (``scheduler.bindingcycle``,
``apiserver.controllerwebhooks``), the pod stays assumed, and the bind is sent again with
the answer. A real HTTPS webhook (``tests.e2e.webhookserver``, ``/sleep/SECONDS/PATH``
answers late) and the real kubectl (v1.32) against a live server.

Upstream rules checked:

* the webhook sees a CREATE of ``pods/binding`` whose object is the Binding (kind
  ``Binding``, ``target`` the node), once;
* while it thinks, ``kubectl get`` is answered well within its delay and the pod is not
  bound; after the answer it is bound exactly once (one ``Scheduled`` event, no
  ``FailedScheduling``).
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
from tests.e2e.webhookserver import (
    requests_in,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

DELAY = 4.0
"""Seconds the webhook thinks before it allows a binding."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-binding-webhooks", ["--nodes", "1"]) as server:
        yield server


def _node_of(served: ServeProcess, ns: str) -> str:
    pod = served.json("get", "pod", "web", "-n", ns)
    return str(pod["spec"].get("nodeName") or "")


def test_a_bind_through_a_slow_webhook_blocks_no_one_and_binds_once(served, webhook):
    ns = new_namespace(served, "bind-wh")
    path = install_slow_hook(served, webhook, ns, "bind", DELAY, resource="pods/binding")
    served.ok("run", "web", "--image=nginx", "-n", ns)

    # The bind waits on the webhook: the server answers anyway, the pod is not bound yet.
    _listed, still_thinking = answers_while_thinking(
        served, webhook, path, DELAY, "pods", "-n", ns, "-o", "wide"
    )
    if still_thinking:
        assert _node_of(served, ns) == ""

    # The answer comes in: the pod is bound, once.
    eventually(lambda: _node_of(served, ns) != "", timeout=30)
    time.sleep(DELAY + 1)  # a second bind (and its review) would have had time to land
    [review] = requests_in(webhook, path, ns)
    assert review["operation"] == "CREATE"
    assert review["subResource"] == "binding"
    assert review["kind"] == {"group": "", "version": "v1", "kind": "Binding"}
    assert review["object"]["target"]["name"] == _node_of(served, ns)
    events = served.json("get", "events", "-n", ns)["items"]
    reasons = [e["reason"] for e in events if e["involvedObject"].get("name") == "web"]
    assert reasons.count("Scheduled") == 1
    assert "FailedScheduling" not in reasons
