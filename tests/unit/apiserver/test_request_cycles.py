"""Requests leave no reference cycles of kubeprio's objects behind.

A cycle is freed only by the garbage collector, whose collections walk every tracked
object; per-request garbage in cycles would make ``serve`` pay a share of each full
collection per pod. Measured in ``bench.serve_load throughput`` (docs/design.md,
"Performance of the write path"): the collections during a run free none of ours; the
objects the final collection frees at shutdown are the server's state, let go at once.
This holds it for the request paths, the failing ones included (an exception kept with
its traceback is the usual cycle: the traceback's frame holds the exception).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubeprio.apiserver.service import ApiService
from tests.unit.apiserver.http_helpers import ADMIN, make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"


def _requests(client: TestClient, index: int) -> None:
    """Create, read, list, update, fail and delete: the paths a pod's life takes."""
    name = f"p{index}"
    created = client.post(PODS, json=pod_manifest(name), headers=ADMIN)
    assert created.status_code == 201, created.text
    assert client.get(f"{PODS}/{name}", headers=ADMIN).status_code == 200
    assert client.get(PODS, headers=ADMIN).status_code == 200
    assert client.post(PODS, json=pod_manifest(name), headers=ADMIN).status_code == 409
    bad: dict[str, Any] = pod_manifest(f"bad-{index}")
    bad["spec"]["containers"] = []
    assert client.post(PODS, json=bad, headers=ADMIN).status_code == 422
    assert client.get(f"{PODS}/missing", headers=ADMIN).status_code == 404
    labelled = client.get(f"{PODS}/{name}", headers=ADMIN).json()
    labelled["metadata"]["labels"] = {"step": str(index)}
    assert client.put(f"{PODS}/{name}", json=labelled, headers=ADMIN).status_code == 200
    assert client.delete(f"{PODS}/{name}", headers=ADMIN).status_code == 200


@pytest.fixture
def saving_garbage() -> Iterator[list[Any]]:
    """Collect, then keep what later collections find (``DEBUG_SAVEALL``) in the list."""
    gc.collect()
    gc.garbage.clear()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_requests_leave_no_cycles_of_ours(api: ApiService, saving_garbage: list[Any]) -> None:
    client = make_client(api)
    for index in range(3):  # warm-up: first-use caches, the middleware stack
        _requests(client, index)
    gc.collect()
    saving_garbage.clear()
    for index in range(3, 43):
        _requests(client, index)
    gc.collect()
    ours = sorted(
        {
            f"{type(obj).__module__}.{type(obj).__qualname__}"
            for obj in saving_garbage
            if type(obj).__module__.startswith("kubeprio.")
        }
    )
    assert ours == []
