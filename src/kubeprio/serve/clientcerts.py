"""Hands the TLS client certificate of a connection to the ASGI app.

uvicorn verifies a client certificate when asked to (``ssl_cert_reqs`` optional,
``ssl_ca_certs`` the cluster CA: a chain that does not verify fails the handshake) but
does not put it in the request scope. ``ClientCertProtocol`` is uvicorn's HTTP protocol
that, once the TLS handshake is done, wraps the app of its connection so every request
on it carries the ASGI TLS extension: ``scope["extensions"]["tls"]["client_cert_chain"]``
(the peer certificate as PEM; OpenSSL gives the server only the peer's own certificate,
which it has already verified against the CA). ``apiserver.x509authn`` reads it. It
also hands uvicorn the connection's transport wrapped in a ``serve.coalescing``
``CoalescingTransport`` (one TLS write per loop turn).

Who drives it: ``serve.server`` passes the class as uvicorn's ``http`` protocol. One of
the two modules of serve that import uvicorn (an import-linter contract).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kubeprio.serve.coalescing import CoalescingTransport

TLS_EXTENSION = "tls"
CLIENT_CERT_CHAIN = "client_cert_chain"


def _with_client_cert(app: Any, chain: list[str]) -> Any:
    """``app`` with the connection's client certificate chain in every request's scope."""

    async def with_cert(scope: dict[str, Any], receive: Any, send: Any) -> None:
        extensions = dict(scope.get("extensions") or {})
        extensions[TLS_EXTENSION] = {CLIENT_CERT_CHAIN: chain}
        await app({**scope, "extensions": extensions}, receive, send)

    return with_cert


class ClientCertProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, adding the peer certificate to each request's scope."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Read the verified peer certificate (if any) once the connection is up, and
        have the connection's writes gathered per loop turn (``serve.coalescing``)."""
        super().connection_made(cast(asyncio.Transport, CoalescingTransport(transport)))
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            self.app = _with_client_cert(self.app, [ssl.DER_cert_to_PEM_cert(der)])
