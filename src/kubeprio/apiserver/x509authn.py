"""x509 client-certificate authentication (upstream's ``--client-ca-file``).

Mirrors ``staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go``: a
request whose TLS client certificate chains to the client CA, is valid now and may be
used for client authentication (no extended key usage, or ``clientAuth``/``any``
among them) is the user named by the subject's common name, in the groups its
organizations name (``CommonNameUserConversion``); ``system:authenticated`` is added,
as upstream's ``AuthenticatedGroupAdder`` does. A certificate without a common name
authenticates nobody; one that fails verification is ignored here (the TLS layer of
``kubeprio serve`` already refuses chains that do not verify), so the request falls
through to the bearer-token authenticators and, without one, gets 401.

The certificate arrives as the ASGI TLS extension's ``client_cert_chain`` (PEM strings,
the client's own first), which ``serve.clientcerts`` puts in the scope. Who drives it:
``apiserver.http`` asks it before the token authenticators, as upstream's union puts
x509 first. Pure: the time comes from the injected clock.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubeprio.admission.chain import UserInfo
from kubeprio.apiserver.authn import AUTHENTICATED_GROUP
from kubeprio.clock import Clock

_CLIENT_USAGES = frozenset(
    {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE}
)


class ClientCertAuthenticator:
    """Maps a verified client certificate to its user (CN) and groups (O)."""

    def __init__(self, ca_pem: bytes, *, clock: Clock) -> None:
        self._cas = x509.load_pem_x509_certificates(ca_pem)
        self._clock = clock

    def _verified(self, cert: x509.Certificate) -> bool:
        now = dt.datetime.fromtimestamp(self._clock.now(), tz=dt.UTC)
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            return False
        try:
            usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except x509.ExtensionNotFound:
            usages = None
        if usages is not None and not _CLIENT_USAGES.intersection(usages):
            return False
        for ca in self._cas:
            try:
                cert.verify_directly_issued_by(ca)
            except (ValueError, TypeError, InvalidSignature):
                continue
            return True
        return False

    def __call__(self, chain: Sequence[str]) -> UserInfo | None:
        """The user of the chain's first certificate, or None."""
        if not chain:
            return None
        try:
            cert = x509.load_pem_x509_certificate(chain[0].encode("ascii"))
        except ValueError:
            return None
        if not self._verified(cert):
            return None
        names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        name = str(names[0].value) if names else ""
        if not name:
            return None
        groups = [
            str(attr.value)
            for attr in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        ]
        if AUTHENTICATED_GROUP not in groups:
            groups.append(AUTHENTICATED_GROUP)
        return UserInfo(name, tuple(groups))
