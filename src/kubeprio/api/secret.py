"""core/v1 Secret: sensitive data by key, of a type that says which keys it must hold.

Mirrors ``k8s.io/api/core/v1/types.go`` (``Secret``, the ``SecretType`` constants and
the well-known keys). ``data`` holds bytes (base64 on the wire); ``stringData`` is a
write-only convenience: the API server merges it into ``data`` on every write and never
stores or returns it (``Convert_v1_Secret_To_core_Secret``, here ``api.defaults``).
``type`` defaults to ``Opaque`` and never changes; the typed secrets must carry their
keys (validation.secret)::

    kubernetes.io/service-account-token   annotation kubernetes.io/service-account.name
    kubernetes.io/dockercfg               data[.dockercfg], a JSON object
    kubernetes.io/dockerconfigjson        data[.dockerconfigjson], a JSON object
    kubernetes.io/basic-auth              data[username] or data[password]
    kubernetes.io/ssh-auth                data[ssh-privatekey], not empty
    kubernetes.io/tls                     data[tls.crt] and data[tls.key]

Every other key stays in ``extra``. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

SECRET_TYPE_OPAQUE: Final = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN: Final = "kubernetes.io/service-account-token"
SECRET_TYPE_DOCKERCFG: Final = "kubernetes.io/dockercfg"
SECRET_TYPE_DOCKER_CONFIG_JSON: Final = "kubernetes.io/dockerconfigjson"
SECRET_TYPE_BASIC_AUTH: Final = "kubernetes.io/basic-auth"
SECRET_TYPE_SSH_AUTH: Final = "kubernetes.io/ssh-auth"
SECRET_TYPE_TLS: Final = "kubernetes.io/tls"

SERVICE_ACCOUNT_NAME_KEY: Final = "kubernetes.io/service-account.name"
SERVICE_ACCOUNT_UID_KEY: Final = "kubernetes.io/service-account.uid"
SERVICE_ACCOUNT_TOKEN_KEY: Final = "token"
SERVICE_ACCOUNT_ROOT_CA_KEY: Final = "ca.crt"
SERVICE_ACCOUNT_NAMESPACE_KEY: Final = "namespace"
"""The keys the tokens controller fills in a service account token Secret."""
DOCKER_CONFIG_KEY: Final = ".dockercfg"
DOCKER_CONFIG_JSON_KEY: Final = ".dockerconfigjson"
BASIC_AUTH_USERNAME_KEY: Final = "username"
BASIC_AUTH_PASSWORD_KEY: Final = "password"
SSH_AUTH_PRIVATE_KEY: Final = "ssh-privatekey"
TLS_CERT_KEY: Final = "tls.crt"
TLS_PRIVATE_KEY_KEY: Final = "tls.key"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Secret:
    """A v1 Secret."""

    api_version: str | None = "v1"
    kind: str | None = "Secret"
    metadata: ObjectMeta = ObjectMeta()
    immutable: bool | None = None
    data: Mapping[str, bytes] | None = None
    string_data: Mapping[str, str] | None = None
    type: str | None = None
    extra: JsonDict = extra_field()
