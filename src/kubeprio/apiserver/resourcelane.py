"""``ResourceLane``: requests to the resource routes skip Starlette's routing layers.

What it is: ASGI middleware placed right inside ``FlowHeaders`` (``apiserver.http``).
Nearly every request ``kubeprio serve`` answers is a resource request (``/api/v1/...``,
``/apis/<group>/<version>/...``), and Starlette hands each one through five more layers
before its endpoint runs: ``ExceptionMiddleware`` and its exception wrapper, the
``Router`` (which tries the routes in order), the ``Route`` and ``request_response``
with a second exception wrapper. Each is an ``await`` and a closure or two per request;
by profile, together about 5 % of the server's time under load. This lane matches the
request against the same ``Route`` objects, in the same order, and calls the endpoint
itself, as ``request_response`` would: same ``Request``, same response sent the same way,
so every byte of every answer is the same.

Why nothing is lost: the layers it skips only turn Starlette's ``HTTPException`` into a
response, and the resource endpoints never raise it (they answer a Status); any other
exception passes through those layers unchanged, to ``ServerErrorMiddleware`` outside,
and passes through the lane the same way. A request that no lane route matches in full
(another path, or a method the route does not serve: a 405) goes down the full stack,
where the ``Router`` decides exactly as before; the lane's routes lead the router's
table, so a full match here is the one the router would have picked.

Who drives it: ``apiserver.http.create_app`` installs it with the resource routes.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send


class ResourceLane:
    """Answer requests the leading ``routes`` match in full; pass the others to ``app``."""

    def __init__(self, app: ASGIApp, routes: Sequence[Route]) -> None:
        self.app = app
        self.routes = tuple(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route in self.routes:
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    # What the Router and the Route's request_response do, in that order.
                    scope["route"] = route
                    scope.update(child_scope)
                    request = Request(scope, receive, send)
                    response = await route.endpoint(request)
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
