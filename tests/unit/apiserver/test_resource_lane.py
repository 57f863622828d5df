"""The resource lane (``apiserver.resourcelane``) answers every request byte for byte as
Starlette's full stack does: a differential test, two identical services, one app with
the lane and one without it, the same requests (writes, reads, tables, errors of each
kind, refusals, paths and methods the lane passes on)."""

from __future__ import annotations

import random
from typing import Any

from starlette.applications import Starlette
from starlette.testclient import TestClient

from kubeprio.admission.chain import AdmissionChain
from kubeprio.apiserver.resourcelane import ResourceLane
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    BOB,
    TABLE_ACCEPT,
    pod_manifest,
    tenancy_client,
)


def _client(*, lane: bool) -> TestClient:
    api = ApiService(
        MemoryStore(), clock=ManualClock(), rng=random.Random(1234), admission=AdmissionChain()
    )
    client = tenancy_client(api)
    app = client.app
    assert isinstance(app, Starlette)
    if not lane:
        # The stack is built on the first request: before it, drop the lane.
        app.user_middleware = [m for m in app.user_middleware if m.cls is not ResourceLane]
    return client


PODS = "/api/v1/namespaces/team-a/pods"
REQUESTS: list[tuple[str, str, dict[str, str], Any]] = [
    ("GET", PODS, ALICE, None),
    ("POST", PODS, ALICE, pod_manifest("web")),
    ("POST", PODS, ALICE, pod_manifest("web")),  # 409 AlreadyExists
    ("POST", PODS, ALICE, pod_manifest("Bad_Name")),  # 422 Invalid
    ("POST", PODS, {**ALICE, "Content-Type": "application/json"}, b"{not json"),  # 400
    ("GET", f"{PODS}/web", ALICE, None),
    ("GET", PODS, {**ALICE, "Accept": TABLE_ACCEPT}, None),
    (
        "PATCH",
        f"{PODS}/web",
        {**ALICE, "Content-Type": "application/merge-patch+json"},
        {"metadata": {"labels": {"a": "b"}}},
    ),
    ("DELETE", f"{PODS}/web", ALICE, None),
    ("GET", f"{PODS}/web", ALICE, None),  # 404 NotFound
    ("GET", "/api/v1/namespaces/other/pods", ALICE, None),  # 403 Forbidden
    ("GET", "/api/v1/namespaces/team-a/pods", BOB, None),  # 403 for an outsider
    ("GET", PODS, {}, None),  # 401 Unauthorized
    ("GET", "/apis/apps/v1/namespaces/team-a/deployments", ALICE, None),
    ("GET", "/api/v1", ALICE, None),
    ("GET", "/apis/apps", ALICE, None),
    ("GET", "/apis/apps/v1", ALICE, None),
    ("GET", "/api/v1/nothing", ADMIN, None),  # 404 for an unknown resource
    ("GET", "/api/v1/nothing", ALICE, None),  # 403: authorized before it is routed
    ("HEAD", PODS, ADMIN, None),  # a lane match (a GET route takes HEAD): 405 inside
    ("TRACE", PODS, ALICE, None),  # 405: not a lane match, the router answers
    ("GET", "/version", ALICE, None),
    ("GET", "/nothing/here", ADMIN, None),
]


def _answers(client: TestClient) -> list[tuple[int, list[tuple[bytes, bytes]], bytes]]:
    answers = []
    for method, path, headers, body in REQUESTS:
        extra: dict[str, Any] = {}
        if isinstance(body, bytes):
            extra["content"] = body
        elif body is not None:
            extra["json"] = body
        response = client.request(method, path, headers=headers, **extra)
        answers.append((response.status_code, response.headers.raw, response.content))
    return answers


def test_the_lane_answers_every_request_as_the_full_stack() -> None:
    with_lane = _answers(_client(lane=True))
    without = _answers(_client(lane=False))
    codes = [code for code, _, _ in with_lane]
    # The requests cover what they say they do.
    assert codes == [
        *(200, 201, 409, 422, 400, 200, 200, 200, 200, 404, 403, 403, 401),
        *(200, 200, 200, 200, 404, 403, 405, 405, 200, 404),
    ]
    for index, (ours, theirs) in enumerate(zip(with_lane, without, strict=True)):
        assert ours == theirs, REQUESTS[index]


def test_the_lane_sits_inside_the_flow_headers_middleware() -> None:
    app = _client(lane=True).app
    assert isinstance(app, Starlette)
    names = [m.cls.__name__ for m in app.user_middleware]  # type: ignore[attr-defined]
    assert names == ["FlowHeaders", "ResourceLane"]
