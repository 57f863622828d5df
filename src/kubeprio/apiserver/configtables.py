"""The Tables of ConfigMaps, Secrets and ServiceAccounts (``kubectl get cm,secret,sa``).

Mirrors upstream's ``pkg/printers/internalversion/printers.go``: ``printConfigMap``
(``NAME DATA AGE``: DATA counts the keys of ``data`` and ``binaryData``),
``printSecret`` (``NAME TYPE DATA AGE``: the keys of ``data``, which by then holds any
``stringData``) and ``printServiceAccount`` (``NAME SECRETS AGE``: the references in
``secrets``, 0 for an account created since tokens stopped being auto-generated).
The counts are integers, the column type strings, as upstream declares them. Column
descriptions are the upstream ones kubectl receives. Pure; registered in
``apiserver.tables.PRINTERS``.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.configmap import ConfigMap, data_count
from kubeprio.api.secret import Secret
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

CONFIG_MAP_COLUMNS: Final = (
    name_column(),
    Column(
        "Data",
        "string",
        "Data contains the configuration data. Each key must consist of alphanumeric "
        "characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the "
        "BinaryData field. The keys stored in Data must not overlap with the keys in the "
        "BinaryData field, this is enforced during validation process.",
    ),
    age_column(),
)
SECRET_COLUMNS: Final = (
    name_column(),
    Column(
        "Type",
        "string",
        "Used to facilitate programmatic handling of secret data. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    Column(
        "Data",
        "string",
        "Data contains the secret data. Each key must consist of alphanumeric characters, "
        "'-', '_' or '.'. The serialized form of the secret data is a base64 encoded "
        "string, representing the arbitrary (possibly non-string) data value here. "
        "Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    age_column(),
)
SERVICE_ACCOUNT_COLUMNS: Final = (
    name_column(),
    Column(
        "Secrets",
        "string",
        "Secrets is a list of the secrets in the same namespace that pods running using "
        "this ServiceAccount are allowed to use. Pods are only limited to this list if this "
        'service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to '
        '"true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated '
        "since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This "
        "field should not be used to find auto-generated service account token secrets for "
        "use outside of pods. Instead, tokens can be requested directly using the "
        "TokenRequest API, or service account token secrets can be manually created. More "
        "info: https://kubernetes.io/docs/concepts/configuration/secret",
    ),
    age_column(),
)


def print_config_map(config_map: ConfigMap, now: float) -> tuple[Cells, RowConditions]:
    """``printConfigMap``: NAME DATA AGE."""
    return [
        config_map.metadata.name or "",
        data_count(config_map),
        since(config_map.metadata.creation_timestamp, now),
    ], None


def print_secret(secret: Secret, now: float) -> tuple[Cells, RowConditions]:
    """``printSecret``: NAME TYPE DATA AGE."""
    return [
        secret.metadata.name or "",
        secret.type or "",
        len(secret.data or {}),
        since(secret.metadata.creation_timestamp, now),
    ], None


def print_service_account(account: ServiceAccount, now: float) -> tuple[Cells, RowConditions]:
    """``printServiceAccount``: NAME SECRETS AGE."""
    return [
        account.metadata.name or "",
        len(account.secrets or ()),
        since(account.metadata.creation_timestamp, now),
    ], None
