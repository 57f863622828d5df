"""The resource routes come first in the app's route table (the hot paths match at the
first or second try) without changing which route answers any path: a differential
test against the table with the resource routes after every other route, as it was."""

from __future__ import annotations

import random
import re

import pytest
from starlette.routing import BaseRoute, Match, Route

from kubeprio.apiserver.http import create_app
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import RealClock
from kubeprio.store.memory import MemoryStore

RESOURCE_PREFIXES = ("/api/v1", "/apis/{")


def _routes() -> list[BaseRoute]:
    service = ApiService(MemoryStore(), clock=RealClock(), rng=random.Random(1))
    return list(create_app(service).router.routes)


def _path(route: BaseRoute) -> str:
    assert isinstance(route, Route)
    return route.path


def _sample(template: str) -> str:
    """A concrete path a route template matches (parameters filled in)."""
    return re.sub(r"\{[a-z]+(:path)?\}", lambda m: "a/b" if m.group(1) else "x", template)


def _answering(routes: list[BaseRoute], path: str, method: str) -> str | None:
    """The route Starlette's router picks: the first full match, else the first partial."""
    scope = {"type": "http", "path": path, "method": method, "root_path": ""}
    partial: str | None = None
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return _path(route)
        if match is Match.PARTIAL and partial is None:
            partial = _path(route)
    return partial


def test_the_resource_routes_lead_the_table() -> None:
    paths = [_path(route) for route in _routes()]
    assert paths[0] == "/api/v1/{rest:path}"
    assert paths[1] == "/apis/{group}/{version}/{rest:path}"
    assert paths[-1] == "/{path:path}"


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "TRACE"])
def test_every_path_is_answered_by_the_same_route_as_with_the_resource_routes_last(
    method: str,
) -> None:
    routes = _routes()
    resource = [r for r in routes if _path(r).startswith(RESOURCE_PREFIXES)]
    others = [r for r in routes if r not in resource]
    reference = others[:-1] + resource + others[-1:]  # the catch-all stays last
    samples = {_sample(_path(route)) for route in routes}
    samples |= {
        "/api/v1",
        "/api/v1/",
        "/api/v1/namespaces/default/pods",
        "/apis/apps",
        "/apis/apps/v1",
        "/apis/apps/v1/",
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
        "/apis",
        "/apis/",
        "/api",
        "/openapi/v3/apis/apps/v1",
        "/nothing/here",
    }
    for path in sorted(samples):
        assert _answering(routes, path, method) == _answering(reference, path, method), path
