"""client-go's event correlator against a live ``kubeprio serve``, seen with the real
kubectl (v1.32): what ``kubectl describe rs`` shows after a Deployment of 30 replicas.

kube-controller-manager records through ``tools/record`` with the default
``EventCorrelator`` (``events_cache.go``): the 10th distinct ``Created pod`` message goes
into one ``(combined from similar events): ...`` event, counted up by PATCH, and the spam
filter lets 25 events per source and object through (refilled one per 300 s): nine
events, then the combined one at count 16, then nothing, not even another reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, new_namespace, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 30
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 10m, memory: 16Mi}
"""

COMBINED = "(combined from similar events): Created pod: "


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-eventcorrelation", ["--nodes", "1"]) as server:
        yield server


def _replicaset_events(served: ServeProcess, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = served.json("get", "events", "-n", ns)["items"]
    return [e for e in items if e["involvedObject"]["kind"] == "ReplicaSet"]


def _rs_name(served: ServeProcess, ns: str) -> str:
    names: list[str] = [
        rs["metadata"]["name"] for rs in served.json("get", "rs", "-n", ns)["items"]
    ]
    assert len(names) == 1, names
    return names[0]


def test_describe_rs_shows_nine_events_and_the_combined_one(served: ServeProcess) -> None:
    ns = new_namespace(served, "corr")
    served.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)

    def settled() -> list[dict[str, Any]] | None:
        events = _replicaset_events(served, ns)
        combined = [e for e in events if e["message"].startswith(COMBINED)]
        return events if combined and combined[0].get("count") == 16 else None

    events = eventually(settled, timeout=60)
    plain = [e for e in events if not e["message"].startswith(COMBINED)]
    (combined,) = [e for e in events if e["message"].startswith(COMBINED)]
    assert len(plain) == 9
    assert all(e["reason"] == "SuccessfulCreate" and e.get("count") == 1 for e in plain)
    assert combined["reason"] == "SuccessfulCreate"
    assert combined["source"]["component"] == "replicaset-controller"
    assert not combined.get("reportingComponent")
    # All 30 pods exist: the spam filter drops events, never the work they describe.
    assert len(served.json("get", "pods", "-n", ns, "-l", "app=web")["items"]) == 30

    describe = served.ok("describe", "rs", _rs_name(served, ns), "-n", ns)
    assert (
        len(re.findall(r"SuccessfulCreate\s+\S+\s+replicaset-controller\s+Created pod:", describe))
        == 9
    )
    assert re.search(
        r"Normal\s+SuccessfulCreate\s+\S+ \(x16 over \S+\)\s+replicaset-controller\s+"
        + re.escape(COMBINED)
        + r"web-\S+",
        describe,
    ), describe


def test_the_spent_burst_also_drops_other_reasons_about_the_object(
    served: ServeProcess,
) -> None:
    """v1.32's ``getSpamKey`` has no reason: the scale-down's ``SuccessfulDelete`` events
    about the same ReplicaSet wait for a refill (one per 300 s)."""
    ns = new_namespace(served, "corr")
    served.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    eventually(
        lambda: (
            served.json("get", "deploy", "web", "-n", ns)["status"].get("readyReplicas") == 30
            or None
        ),
        timeout=60,
    )
    served.ok("scale", "deploy/web", "-n", ns, "--replicas=25")

    def scaled_down() -> bool | None:
        status = served.json("get", "rs", _rs_name(served, ns), "-n", ns)["status"]
        return status.get("replicas") == 25 or None

    eventually(scaled_down, timeout=60)
    reasons = {e["reason"] for e in _replicaset_events(served, ns)}
    assert reasons == {"SuccessfulCreate"}
