"""Shared helpers for the HTTP adapter tests: an app over an in-process ApiService."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from kubeprio.admission.defaults import default_chain
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.tenant import Tenant, TenantSpec
from kubeprio.apiserver.authn import TokenAuthenticator, TokenRecord
from kubeprio.apiserver.authz import TenantAuthorizer
from kubeprio.apiserver.http import create_app
from kubeprio.apiserver.service import ApiService

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


TENANCY_TOKENS = [
    TokenRecord("admin-token", "admin", "admin-uid", ("system:masters",)),
    TokenRecord("alice-token", "alice", "alice-uid"),
    TokenRecord("bob-token", "bob", "bob-uid"),
    TokenRecord("dev-token", "dave", "dave-uid", ("kestrel-devs",)),
]
"""An admin, a tenant user (alice), an outsider (bob) and a member by group (dave)."""
ADMIN = {"Authorization": "Bearer admin-token"}
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
DEV = {"Authorization": "Bearer dev-token"}
"""Request headers carrying each of ``TENANCY_TOKENS``."""


def create_tenancy(api: ApiService) -> None:
    """Namespaces ``team-a`` (labelled), ``team-b``, ``other`` and the Tenant ``kestrel``
    owning the first two, with user ``alice`` and group ``kestrel-devs``."""
    for name, labels in (("team-a", {"tenant": "kestrel"}), ("team-b", {}), ("other", {})):
        api.create_object(Namespace(metadata=ObjectMeta(name=name, labels=labels)))
    api.create_object(
        Tenant(
            metadata=ObjectMeta(name="kestrel"),
            spec=TenantSpec(
                namespaces=("team-a", "team-b"), users=("alice",), groups=("kestrel-devs",)
            ),
        )
    )


def make_client(api: ApiService, *, admission: bool = True, **kwargs: Any) -> TestClient:
    """A TestClient over ``api`` (with the default admission chain unless told otherwise)."""
    if admission:
        api.admission = default_chain(api.listers)
    return TestClient(create_app(api, **kwargs), raise_server_exceptions=True)


def tenancy_client(api: ApiService, **kwargs: Any) -> TestClient:
    """``make_client`` as ``serve`` authenticates and authorizes (``TENANCY_TOKENS``,
    ``TenantAuthorizer``), over ``create_tenancy``'s namespaces and Tenant."""
    client = make_client(
        api,
        authenticator=TokenAuthenticator(TENANCY_TOKENS),
        authorizer=TenantAuthorizer(api.listers),
        **kwargs,
    )
    create_tenancy(api)
    return client


def pod_manifest(name: str, **spec: Any) -> dict[str, Any]:
    """A minimal pod body."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def watch_lines(client: TestClient, url: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Run a watch (it must carry ``timeoutSeconds``) and return its decoded events."""
    import json

    with client.stream("GET", url, **kwargs) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        return [json.loads(line) for line in response.iter_lines() if line]
