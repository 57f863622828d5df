"""The check every "a write waiting on a slow webhook holds up nothing else" test makes.

Upstream each writer (a kubelet's status manager, the scheduler's binding goroutine, a
controller's worker) blocks in its own goroutine while an admission webhook thinks, so the
API server goes on answering everyone else. kubeprio's in-process writers share
``kubeprio serve``'s event loop and park their writes instead (``client.answeredretry``);
these tests install a webhook that answers late (``tests.e2e.webhookserver``'s
``/sleep/SECONDS/PATH``) and, once it has been asked, time a ``kubectl get``.
"""

from __future__ import annotations

import time

from tests.e2e.serving import ServeProcess, eventually
from tests.e2e.webhookserver import WebhookServer, namespaced_webhook_configuration, requests_on


def install_slow_hook(
    served: ServeProcess,
    webhook: WebhookServer,
    ns: str,
    name: str,
    delay: float,
    *,
    resource: str,
    operations: tuple[str, ...] = ("CREATE",),
) -> str:
    """A validating webhook on ``operations`` of ``resource`` in ``ns`` only, named
    ``slow-NAME-NS`` (hook ``slow-NAME.kubeprio.test``), that allows after ``delay``
    seconds; returns the path it is called on."""
    path = f"/sleep/{delay:g}/allow-{ns}"
    served.ok(
        "create",
        "-f",
        "-",
        stdin=namespaced_webhook_configuration(
            f"slow-{name}-{ns}",
            f"slow-{name}.kubeprio.test",
            webhook.url(path),
            webhook.ca_bundle,
            namespace=ns,
            resource=resource,
            operations=operations,
        ),
    )
    return path


def answers_while_thinking(
    served: ServeProcess, webhook: WebhookServer, path: str, delay: float, *get: str
) -> tuple[str, bool]:
    """Once ``webhook`` has been asked on ``path`` (it answers ``delay`` seconds late),
    ``kubectl get GET...`` must succeed within half that delay. Returns its output and
    whether the webhook had still not answered when it came back (the waiting write then
    cannot have landed yet, which the caller checks)."""
    eventually(lambda: requests_on(webhook, path), timeout=15)
    started = time.monotonic()
    listed = served.kubectl("get", *get)
    latency = time.monotonic() - started
    still_thinking = not [seen for seen in webhook.answered if seen.startswith(path + "?")]
    assert listed.returncode == 0
    assert latency < delay / 2, f"kubectl get took {latency:.2f}s while the webhook thought"
    return listed.stdout, still_thinking
