"""core/v1 ServiceAccount: an identity for the processes in pods.

Mirrors ``k8s.io/api/core/v1/types.go`` (``ServiceAccount``, ``LocalObjectReference``).
``secrets`` lists the Secrets pods of the account may mount (only names are kept: the
registry clears the rest, ``cleanSecretReferences``), ``imagePullSecrets`` the Secrets
the kubelet pulls images with, ``automountServiceAccountToken`` whether pods get a token
volume. In ``kubeprio serve`` the ServiceAccount admission plugin
(``admission.serviceaccount``) reads them for every new pod, and the
``serviceaccounts/token`` subresource (``apiserver.tokenrequest``) issues their tokens;
the objects are served, listed and counted as upstream's, and the service account
controller (``controllers.serviceaccount``) keeps a ``default`` account in every
namespace. Unmodelled keys stay in ``extra``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

DEFAULT_SERVICE_ACCOUNT: Final = "default"
"""The account every namespace gets (``DefaultServiceAccountsControllerOptions``)."""
ENFORCE_MOUNTABLE_SECRETS_ANNOTATION: Final = "kubernetes.io/enforce-mountable-secrets"
"""Limits pods to the account's ``secrets``; deprecated since v1.32 (a warning on write)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LocalObjectReference:
    """A reference to an object in the same namespace, by name."""

    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceAccount:
    """A v1 ServiceAccount."""

    api_version: str | None = "v1"
    kind: str | None = "ServiceAccount"
    metadata: ObjectMeta = ObjectMeta()
    secrets: tuple[ObjectReference, ...] | None = None
    image_pull_secrets: tuple[LocalObjectReference, ...] | None = None
    automount_service_account_token: bool | None = None
    extra: JsonDict = extra_field()
