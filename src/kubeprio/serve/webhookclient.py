"""The HTTPS client ``kubeprio serve`` calls admission webhooks with.

What it is: ``admission.webhookcall.WebhookCaller`` over the standard library
(``http.client`` and ``ssl``): one connection per call to the resolved address, TLS with the
webhook's server name (``NAME.NAMESPACE.svc`` for a service, the URL's host otherwise),
verified against the webhook's ``caBundle`` or, when it has none, the system roots, as
upstream's webhook client does. The answer is read whole (at most 3 MiB, upstream's
limit on a webhook response body is larger but a review is small).

Failures are ``TransportError``s worded as Go's ``net/http`` words them after
``Post "URL": `` (upstream prints them inside ``failed calling webhook``): ``dial tcp
HOST:PORT: connect: connection refused``, ``context deadline exceeded`` when
``timeoutSeconds`` pass, ``tls: failed to verify certificate: x509: certificate signed by
unknown authority``.

A post blocks its thread until the answer or the timeout: ``kubeprio serve`` posts the
reviews of HTTP writes on worker threads (``apiserver.webhookwaits``), so the event loop
goes on serving; in-process writers (controllers) call in place.
Who drives it: ``serve.server`` hands it to the control plane. I/O: the network.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import Final

from kubeprio.admission.webhookcall import HttpAnswer, TransportError, WebhookTarget

MAX_RESPONSE_BYTES: Final = 3 * 1024 * 1024
_UNKNOWN_AUTHORITY: Final = (
    "tls: failed to verify certificate: x509: certificate signed by unknown authority"
)


def _join_host_port(host: str, port: int) -> str:
    """Go's ``net.JoinHostPort``: IPv6 literals in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _tls_context(ca_bundle: bytes) -> ssl.SSLContext:
    if not ca_bundle:
        return ssl.create_default_context()
    context = ssl.create_default_context(cadata=ca_bundle.decode("ascii", "replace"))
    return context


def _certificate_error(exc: ssl.SSLCertVerificationError, server_name: str) -> str:
    """An ``x509`` verification failure as Go words it."""
    message = exc.verify_message or str(exc)
    if "Hostname mismatch" in message or "IP address mismatch" in message:
        return (
            f"tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
        )
    if "expired" in message:
        return (
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
        )
    return _UNKNOWN_AUTHORITY


class HttpsWebhookCaller:
    """Posts AdmissionReviews over HTTPS (``admission.webhookcall.WebhookCaller``)."""

    def post(self, target: WebhookTarget, body: bytes, timeout: float) -> HttpAnswer:
        """POST ``body`` to ``target``; ``TransportError`` when no answer comes."""
        address = _join_host_port(target.host, target.port)
        try:
            context = _tls_context(target.ca_bundle)
        except (ssl.SSLError, ValueError):
            raise TransportError(
                "unable to load root certificates: unable to parse bytes as PEM block"
            ) from None
        try:
            raw = socket.create_connection((target.host, target.port), timeout=timeout)
        except TimeoutError:
            raise TransportError("context deadline exceeded") from None
        except socket.gaierror:
            raise TransportError(f"dial tcp: lookup {target.host}: no such host") from None
        except ConnectionRefusedError:
            raise TransportError(f"dial tcp {address}: connect: connection refused") from None
        except OSError as exc:
            raise TransportError(f"dial tcp {address}: connect: {exc.strerror or exc}") from None
        try:
            try:
                tls = context.wrap_socket(raw, server_hostname=target.server_name)
            except ssl.SSLCertVerificationError as exc:
                raise TransportError(_certificate_error(exc, target.server_name)) from None
            except TimeoutError:
                raise TransportError("net/http: TLS handshake timeout") from None
            except (ssl.SSLError, OSError) as exc:
                raise TransportError(f"remote error: tls: {exc}") from None
            connection = http.client.HTTPSConnection(
                target.server_name, target.port, timeout=timeout, context=context
            )
            connection.sock = tls
            try:
                connection.request(
                    "POST",
                    target.path,
                    body=body,
                    headers={
                        "Content-Type": "application/json",
                        "Accept": "application/json, */*",
                        "User-Agent": "kube-apiserver-admission",
                    },
                )
                response = connection.getresponse()
                answer = response.read(MAX_RESPONSE_BYTES)
            except TimeoutError:
                raise TransportError("context deadline exceeded") from None
            except (http.client.HTTPException, OSError):
                raise TransportError("EOF") from None
            finally:
                connection.close()
            return HttpAnswer(
                status=response.status,
                content_type=response.getheader("Content-Type") or "",
                body=answer,
            )
        finally:
            raw.close()
