"""A write waiting on a slow admission webhook holds up nothing else in ``kubeprio serve``.

A real HTTPS webhook (``tests.e2e.webhookserver``, ``/sleep/SECONDS/PATH`` answers late),
the real kubectl (v1.32) against a live server. While one ``kubectl create`` waits on the
webhook, other requests are answered and the scheduler binds pods (as a real API server,
which serves each request on its own goroutine); the waiting request then gets the
webhook's answer. Upstream rules checked:

* ``webhook/errors/statuserror.go`` ``ToStatusErr``: the late refusal reads as an
  immediate one;
* ``webhook/mutating/dispatcher.go`` then ``webhook/validating/dispatcher.go``: the
  mutating webhook's patch is what the validating webhook sees; each is called once;
* ``registry/rest/create.go`` ``BeforeCreate``: the validating webhook sees the
  ``uid`` and ``creationTimestamp`` the object is stored with;
* ``webhook/validating/dispatcher.go``: validating webhooks are called in parallel;
* ``util/webhook`` (``ErrCallingWebhook``) with the webhook's ``timeoutSeconds``:
  ``failurePolicy`` Fail answers ``... context deadline exceeded``, Ignore admits.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from subprocess import CompletedProcess
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
from tests.e2e.webhookserver import (
    ALLOW_WARNING,
    FORBIDDEN_CLASS,
    PRIORITY_CLASSES,
    WebhookServer,
    namespaced_hook,
    webhook_configuration,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-webhook-waits", ["--nodes", "1"]) as server:
        server.ok("apply", "-f", "-", stdin=PRIORITY_CLASSES)
        yield server


@pytest.fixture
def background() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield pool


def _pod(name: str, ns: str, priority_class: str = "standard") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n  priorityClassName: {priority_class}\n"
        "  containers:\n  - {name: app, image: nginx, resources: {requests: {cpu: 10m}}}\n"
    )


def _reviews(webhook: WebhookServer, path: str, ns: str) -> list[dict[str, Any]]:
    return [
        review["request"]
        for seen, review in webhook.reviews
        if seen.startswith(path) and review["request"].get("namespace") == ns
    ]


def _create_in_background(
    pool: ThreadPoolExecutor, served: ServeProcess, manifest: str
) -> Future[CompletedProcess[str]]:
    return pool.submit(served.kubectl, "create", "-f", "-", stdin=manifest, timeout=60)


def _served_meanwhile(served: ServeProcess, waiting: Future[CompletedProcess[str]]) -> None:
    """A read answers quickly, and a new pod elsewhere is scheduled, while ``waiting``
    still waits on its webhook."""
    started = time.monotonic()
    assert served.kubectl("get", "pods", "-A").returncode == 0
    assert time.monotonic() - started < 3
    free = new_namespace(served, "wh-free")
    served.ok("create", "-f", "-", stdin=_pod("elsewhere", free))
    eventually(
        lambda: served.json("get", "pod", "elsewhere", "-n", free)["spec"].get("nodeName"),
        timeout=5,
    )
    assert not waiting.done()


def test_a_create_waiting_on_a_slow_webhook_blocks_no_one_and_gets_its_answer(
    served, webhook, background
):
    ns = new_namespace(served, "wh-wait")
    path = "/sleep/8/deny-priority"
    served.ok(
        "create",
        "-f",
        "-",
        stdin=webhook_configuration(
            "ValidatingWebhookConfiguration",
            f"wait-{ns}",
            namespaced_hook(
                "wait.kubeprio.test", webhook.url(path), webhook.ca_bundle, namespace=ns
            ),
        ),
    )
    waiting = _create_in_background(background, served, _pod("vip", ns, FORBIDDEN_CLASS))
    eventually(lambda: _reviews(webhook, path, ns), timeout=10)
    _served_meanwhile(served, waiting)
    assert not [seen for seen in webhook.answered if seen.startswith(path)]
    refused = waiting.result()
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": admission webhook '
        '"wait.kubeprio.test" denied the request: priority class "forbidden" is reserved for '
        "the platform team"
    )
    assert len(_reviews(webhook, path, ns)) == 1
    assert served.ok("get", "pods", "-n", ns, "-o", "name") == ""
    served.ok("delete", "validatingwebhookconfiguration", f"wait-{ns}")


def test_slow_mutating_then_validating_webhooks_each_answer_once(served, webhook, background):
    ns = new_namespace(served, "wh-pair")
    label, check = "/sleep/2/add-label", "/sleep/3/deny-priority"
    ca = webhook.ca_bundle
    served.ok(
        "create",
        "-f",
        "-",
        stdin=webhook_configuration(
            "MutatingWebhookConfiguration",
            f"label-{ns}",
            namespaced_hook("label.kubeprio.test", webhook.url(label), ca, namespace=ns),
        ),
    )
    # Two validating webhooks of three seconds each: called in parallel, as upstream
    # (2 + 3 seconds in all; one after the other would take 2 + 3 + 3).
    served.ok(
        "create",
        "-f",
        "-",
        stdin=webhook_configuration(
            "ValidatingWebhookConfiguration",
            f"check-{ns}",
            namespaced_hook("check-a.kubeprio.test", webhook.url(check), ca, namespace=ns),
            namespaced_hook("check-b.kubeprio.test", webhook.url(check + "/b"), ca, namespace=ns),
        ),
    )
    started = time.monotonic()
    waiting = _create_in_background(background, served, _pod("web", ns))
    eventually(lambda: _reviews(webhook, label, ns), timeout=10)
    assert served.kubectl("get", "pods", "-n", ns).returncode == 0
    created = waiting.result()
    elapsed = time.monotonic() - started
    assert (created.returncode, created.stdout) == (0, "pod/web created\n"), created.stderr
    assert f"Warning: {ALLOW_WARNING}" in created.stderr.splitlines()
    assert 5 <= elapsed < 7.5
    [mutated] = _reviews(webhook, label, ns)
    assert "labels" not in mutated["object"]["metadata"]
    [first, second] = _reviews(webhook, check, ns)
    pod = served.json("get", "pod", "web", "-n", ns)
    assert pod["metadata"]["labels"] == {"webhook-mutated": "true"}
    for review in (first, second):
        seen = review["object"]["metadata"]
        assert seen["labels"] == {"webhook-mutated": "true"}
        assert seen["uid"] == pod["metadata"]["uid"]
        assert seen["creationTimestamp"] == pod["metadata"]["creationTimestamp"]
    assert len({v["name"] for v in pod["spec"]["volumes"]}) == 1
    served.ok("delete", "mutatingwebhookconfiguration", f"label-{ns}")
    served.ok("delete", "validatingwebhookconfiguration", f"check-{ns}")


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_a_webhook_past_its_timeout_follows_its_failure_policy_while_the_server_serves(
    served, webhook, background, policy
):
    ns = new_namespace(served, f"wh-late-{policy.lower()}")
    path = "/sleep/8/allow"
    served.ok(
        "create",
        "-f",
        "-",
        stdin=webhook_configuration(
            "ValidatingWebhookConfiguration",
            f"late-{ns}",
            namespaced_hook(
                "late.kubeprio.test",
                webhook.url(path),
                webhook.ca_bundle,
                namespace=ns,
                timeoutSeconds=3,
                failurePolicy=policy,
            ),
        ),
    )
    started = time.monotonic()
    waiting = _create_in_background(background, served, _pod("web", ns))
    eventually(lambda: _reviews(webhook, path, ns), timeout=10)
    assert served.kubectl("get", "pods", "-A").returncode == 0
    assert not waiting.done()
    result = waiting.result()
    assert 3 <= time.monotonic() - started < 7
    if policy == "Ignore":
        assert (result.returncode, result.stdout) == (0, "pod/web created\n"), result.stderr
    else:
        assert result.returncode == 1
        assert result.stderr.strip() == (
            'Error from server (InternalError): error when creating "STDIN": Internal error '
            'occurred: failed calling webhook "late.kubeprio.test": failed to call webhook: '
            f'Post "https://127.0.0.1:{webhook.port}{path}?timeout=3s": context deadline '
            "exceeded"
        )
    served.ok("delete", "validatingwebhookconfiguration", f"late-{ns}")
