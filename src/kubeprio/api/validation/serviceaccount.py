"""ServiceAccount validation (core/v1), and the warning of a deprecated annotation.

Mirrors ``ValidateServiceAccount``/``ValidateServiceAccountUpdate`` of upstream
``pkg/apis/core/validation/validation.go``: only the object metadata is checked (a
DNS-subdomain name, ``validation.meta``). ``warnIfHasEnforceMountableSecretsAnnotation``
of ``pkg/registry/core/serviceaccount/strategy.go`` warns when a write newly sets
``kubernetes.io/enforce-mountable-secrets`` (deprecated in v1.32; an update of an account
that already had it is quiet). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.serviceaccount import ENFORCE_MOUNTABLE_SECRETS_ANNOTATION, ServiceAccount
from kubeprio.api.validation.meta import KindUpdateWarnings, KindWarnings, key

ENFORCE_MOUNTABLE_SECRETS_WARNING: Final = (
    f"{key('metadata.annotations', ENFORCE_MOUNTABLE_SECRETS_ANNOTATION)}: deprecated in "
    "v1.32+; prefer separate namespaces to isolate access to mounted secrets"
)


def _has_enforce_annotation(account: ServiceAccount) -> bool:
    return ENFORCE_MOUNTABLE_SECRETS_ANNOTATION in (account.metadata.annotations or {})


def service_account_warnings(
    account: ServiceAccount, old: ServiceAccount | None = None
) -> list[str]:
    """``warnIfHasEnforceMountableSecretsAnnotation``: only when the write sets it anew."""
    if old is not None and _has_enforce_annotation(old):
        return []
    return [ENFORCE_MOUNTABLE_SECRETS_WARNING] if _has_enforce_annotation(account) else []


WARNINGS: Final[dict[type[Any], KindWarnings]] = {ServiceAccount: service_account_warnings}
UPDATE_WARNINGS: Final[dict[type[Any], KindUpdateWarnings]] = {
    ServiceAccount: service_account_warnings
}
