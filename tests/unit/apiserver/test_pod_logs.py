"""``pods/log`` as upstream answers it, for containers that print nothing.

Upstream rules checked here:

* the API server validates ``PodLogOptions`` first (``ValidatePodLogOptions``:
  ``tailLines`` >= 0, ``limitBytes`` > 0, ``sinceSeconds`` > 0, not both ``sinceTime``
  and ``sinceSeconds``), a 422 ``PodLogOptions "<pod>" is invalid``;
* then picks the container (``validateContainer`` in ``pkg/registry/core/pod/
  strategy.go``): the only one, else a 400 naming every container (init containers
  first, Go's ``%s`` of a slice); a name the pod lacks is a 400;
* a pod without a node answers an empty log (``LogLocation``'s empty location);
* otherwise the kubelet's ``validateContainerLogStatus`` (``pkg/kubelet/
  kubelet_pods.go``) decides, and its refusal comes back as a 400 with its text.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.core import Container, ContainerStatus, Pod, PodSpec, PodStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver import podlogs
from tests.unit.apiserver.http_helpers import make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"


def _pod(*names: str, inits: tuple[str, ...] = (), statuses: dict[str, Any] | None = None) -> Pod:
    status = None
    if statuses is not None:
        status = PodStatus(
            container_statuses=tuple(
                ContainerStatus(name=name, extra=extra) for name, extra in statuses.items()
            )
        )
    return Pod(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=PodSpec(
            node_name="n1",
            containers=tuple(Container(name=n, image="nginx") for n in names),
            init_containers=tuple(Container(name=n, image="busybox") for n in inits) or None,
        ),
        status=status,
    )


@pytest.mark.parametrize(
    ("pod", "requested", "chosen"),
    [
        (_pod("app"), "", "app"),
        (_pod("app", "side"), "side", "side"),
        (_pod("app", inits=("setup",)), "setup", "setup"),
    ],
)
def test_the_container_is_chosen_as_validate_container_does(
    pod: Pod, requested: str, chosen: str
) -> None:
    assert podlogs.container_for(pod, requested) == chosen


@pytest.mark.parametrize(
    ("pod", "requested", "refusal"),
    [
        (_pod(), "", "a container name must be specified for pod web"),
        (
            _pod("app", "side", inits=("setup",)),
            "",
            "a container name must be specified for pod web, choose one of: [setup app side]",
        ),
        (_pod("app"), "nope", "container nope is not valid for pod web"),
    ],
)
def test_an_unclear_container_is_validate_containers_400(
    pod: Pod, requested: str, refusal: str
) -> None:
    with pytest.raises(errors.StatusError) as caught:
        podlogs.container_for(pod, requested)
    assert caught.value.code == 400
    assert caught.value.message == refusal


RUNNING = {"containerID": "containerd://1", "state": {"running": {"startedAt": "t"}}}
DONE = {"containerID": "containerd://1", "state": {"terminated": {"containerID": "containerd://1"}}}


@pytest.mark.parametrize(
    ("extra", "previous", "refusal"),
    [
        (RUNNING, False, None),
        (DONE, False, None),
        (RUNNING, True, 'previous terminated container "app" in pod "web" not found'),
        (
            {**RUNNING, "lastState": {"terminated": {"containerID": "containerd://0"}}},
            True,
            None,
        ),
        ({"state": {"terminated": {}}}, False, 'container "app" in pod "web" is terminated'),
        (
            {"state": {"terminated": {}}, "lastState": {"terminated": {"containerID": "c://0"}}},
            False,
            None,
        ),
        (
            {"state": {"waiting": {"reason": "ContainerCreating"}}},
            False,
            'container "app" in pod "web" is waiting to start: ContainerCreating',
        ),
        (
            {"state": {"waiting": {"reason": "ImagePullBackOff"}}},
            False,
            'container "app" in pod "web" is waiting to start: trying and failing to pull image',
        ),
        (
            {"state": {"waiting": {"reason": "ErrImagePull"}}},
            False,
            'container "app" in pod "web" is waiting to start: image can\'t be pulled',
        ),
        ({"state": {}}, False, 'container "app" in pod "web" is waiting to start - no logs yet'),
        (None, False, 'container "app" in pod "web" is not available'),
    ],
)
def test_the_kubelet_answer_follows_validate_container_log_status(
    extra: dict[str, Any] | None, previous: bool, refusal: str | None
) -> None:
    pod = _pod("app", statuses={} if extra is None else {"app": extra})
    if refusal is None:
        podlogs.check_kubelet_answer(pod, "app", previous=previous)
        return
    with pytest.raises(errors.StatusError) as caught:
        podlogs.check_kubelet_answer(pod, "app", previous=previous)
    assert caught.value.code == 400
    assert caught.value.message == refusal


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"tailLines": "-1"}, "tailLines: Invalid value: -1: must be greater than or equal to 0"),
        ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0"),
        ({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
        (
            {"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"},
            # Upstream names the empty path (field.NewPath("")), so Go prints ": Forbidden".
            ": Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ),
    ],
)
def test_out_of_range_options_are_upstreams_422(query: dict[str, str], message: str) -> None:
    with pytest.raises(errors.StatusError) as caught:
        podlogs.parse_options(query, "web")
    assert caught.value.code == 422
    assert caught.value.message == f'PodLogOptions "web" is invalid: {message}'


def test_options_in_range_parse() -> None:
    options = podlogs.parse_options(
        {"container": "app", "follow": "true", "tailLines": "0", "previous": "false"}, "web"
    )
    assert options == podlogs.LogOptions(container="app", follow=True, tail_lines=0)


# --- over HTTP ---------------------------------------------------------------------------


@pytest.fixture
def client(api):
    return make_client(api)


def _run(client, name: str, *, node: str | None = "n1", running: bool = True) -> None:
    spec = {"nodeName": node} if node else {}
    client.post(PODS, json=pod_manifest(name, **spec))
    if running:
        status = {"containerStatuses": [{"name": "c", **RUNNING}], "phase": "Running"}
        client.patch(
            f"{PODS}/{name}/status",
            json={"status": status},
            headers={"Content-Type": "application/merge-patch+json"},
        )


def test_a_running_container_answers_an_empty_text_log(client):
    _run(client, "a")
    response = client.get(f"{PODS}/a/log", params={"container": "c", "timestamps": "true"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain"
    assert response.content == b""


def test_a_pod_without_a_node_answers_an_empty_log(client):
    _run(client, "pending", node=None, running=False)
    response = client.get(f"{PODS}/pending/log")
    assert (response.status_code, response.content) == (200, b"")


def test_refusals_are_status_bodies(client):
    _run(client, "started", running=False)
    response = client.get(f"{PODS}/started/log")
    assert response.status_code == 400
    assert response.json()["message"] == 'container "c" in pod "started" is not available'
    assert client.get(f"{PODS}/missing/log").status_code == 404
    invalid = client.get(f"{PODS}/started/log", params={"tailLines": "-2"})
    assert invalid.status_code == 422
    assert invalid.json()["details"]["kind"] == "PodLogOptions"
    assert client.get(f"{PODS}/started/log", params={"tailLines": "x"}).status_code == 400
    # Only GET: the subresource serves no other verb.
    assert client.post(f"{PODS}/started/log", json={}).status_code == 405


def test_a_followed_log_stays_open_while_the_container_runs(client):
    """``kubectl logs -f``: the stream ends when the container stops."""
    _run(client, "f")

    def stop_later() -> None:
        time.sleep(0.8)
        done = {"containerStatuses": [{"name": "c", **DONE}], "phase": "Succeeded"}
        client.patch(
            f"{PODS}/f/status",
            json={"status": done},
            headers={"Content-Type": "application/merge-patch+json"},
        )

    stopper = threading.Thread(target=stop_later)
    started = time.monotonic()
    stopper.start()
    response = client.get(f"{PODS}/f/log", params={"follow": "true"})
    stopper.join()
    assert response.status_code == 200
    assert response.content == b""
    assert time.monotonic() - started >= 0.8


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, False),
        ("false", False),
        ("FALSE", False),
        ("False", False),
        ("0", False),
        ("true", True),
        ("1", True),
        ("", True),
        ("yes", True),
        ("t", True),
    ],
)
def test_boolean_options_read_as_upstreams_parameter_codec(raw, expected):
    # runtime.Convert_Slice_string_To_bool: only absent, "false" (any case) and "0" are
    # false; an empty value (``?follow``) is true.
    query = {} if raw is None else {"follow": raw, "previous": raw, "timestamps": raw}
    options = podlogs.parse_options(query, "web")
    assert (options.follow, options.previous, options.timestamps) == (expected,) * 3
