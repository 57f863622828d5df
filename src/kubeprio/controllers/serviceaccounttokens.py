"""The tokens controller: fills service account token Secrets and removes orphaned ones.

Mirrors ``pkg/controller/serviceaccount/tokens_controller.go`` (v1.32), which no longer
creates token Secrets for accounts (1.24) but still serves the ones users create::

    apiVersion: v1
    kind: Secret
    type: kubernetes.io/service-account-token
    metadata:
      name: deployer-token
      annotations: {kubernetes.io/service-account.name: deployer}

* a token Secret that is added or updated is synced (``syncSecret``): when its account
  (by the name annotation, and by the uid annotation when set) exists, in the informer or
  else by a live read, the Secret gets what it lacks: ``data.token`` (a legacy token the
  injected generator signs, ``apiserver.legacytokens``), ``data.namespace``, ``data.ca.crt``
  (the cluster CA, replaced when it differs) and both annotations, written by an update of
  a freshly read copy (one the informer has not caught up with is left for its update
  event; a conflict or a vanished Secret is not retried). When the account does not
  exist the Secret is deleted, with its uid as precondition: upstream's answer to a token
  Secret created before its account, or naming none that exists;
* a deleted token Secret is removed from its account's ``secrets`` list, if listed;
* a deleted ServiceAccount takes its token Secrets with it (``deleteTokens``: those whose
  name annotation names it and whose uid annotation is empty or its uid).

Queue keys carry what the sync needs after the object is gone, as upstream's
``secretQueueKey``/``serviceAccountQueueKey``: namespace, name, uid and, for a Secret, the
account's name and uid from its annotations. Accounts are queued on deletion only: the sync
of an account that still exists does nothing. A secondary index on the secrets informer
(token Secrets by ``<namespace>/<account>``) finds an account's tokens without scanning.

Who drives it: ``serve.server`` (the CA of ``serve.pki``, the generator over ``sa.key``);
simulations run without it. Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Final

from kubeprio.api import errors
from kubeprio.api.meta import ObjectMeta, Preconditions
from kubeprio.api.model import evolve
from kubeprio.api.secret import (
    SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    SERVICE_ACCOUNT_NAME_KEY,
    SERVICE_ACCOUNT_NAMESPACE_KEY,
    SERVICE_ACCOUNT_ROOT_CA_KEY,
    SERVICE_ACCOUNT_TOKEN_KEY,
    SERVICE_ACCOUNT_UID_KEY,
    Secret,
)
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client, DeleteRequest
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller

TOKEN_SECRET_INDEX: Final = "service-account-token"
"""Token Secrets by ``<namespace>/<account name>`` (the name annotation)."""
REMOVE_REFERENCE_ATTEMPTS: Final = 10
"""``RemoveTokenBackoff.Steps``: conflicts tolerated while unlisting a deleted Secret."""
_SEP: Final = "\0"
LOG: Final = logging.getLogger("kubeprio.controllers.serviceaccounttokens")

TokenGenerator = Callable[[ServiceAccount, Secret], str]
"""Signs the legacy token of a Secret for its account (``serviceaccount.LegacyClaims``)."""


def by_account(secret: Secret) -> list[str]:
    """``TOKEN_SECRET_INDEX``'s key of a token Secret; none for other Secrets."""
    if secret.type != SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        return []
    name = secret.metadata.annotation(SERVICE_ACCOUNT_NAME_KEY) or ""
    return [f"{secret.metadata.namespace or ''}/{name}"]


def is_token_of(secret: Secret, account: ServiceAccount) -> bool:
    """``IsServiceAccountToken``: a token Secret naming the account (and its uid, if any)."""
    if secret.type != SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        return False
    if secret.metadata.annotation(SERVICE_ACCOUNT_NAME_KEY) != account.metadata.name:
        return False
    uid = secret.metadata.annotation(SERVICE_ACCOUNT_UID_KEY) or ""
    return not uid or uid == (account.metadata.uid or "")


def _secret_key(secret: Secret) -> str:
    meta = secret.metadata
    return _SEP.join(
        (
            "secret",
            meta.namespace or "",
            meta.name or "",
            meta.uid or "",
            meta.annotation(SERVICE_ACCOUNT_NAME_KEY) or "",
            meta.annotation(SERVICE_ACCOUNT_UID_KEY) or "",
        )
    )


def _account_key(account: ServiceAccount) -> str:
    meta = account.metadata
    return _SEP.join(("account", meta.namespace or "", meta.name or "", meta.uid or ""))


class TokensController(Controller):
    """``TokensController``: keeps token Secrets filled and bound to existing accounts."""

    name = "tokens-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        service_accounts: Informer[ServiceAccount],
        secrets: Informer[Secret],
        root_ca: bytes,
        generate_token: TokenGenerator,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.service_accounts = service_accounts
        self.secrets = secrets
        self.root_ca = root_ca
        self.generate_token = generate_token
        secrets.add_index(TOKEN_SECRET_INDEX, by_account)
        service_accounts.add_handler(
            FuncHandler(on_delete=lambda sa: self.queue.add(_account_key(sa)))
        )
        secrets.add_handler(
            FuncHandler(
                on_add=self._secret_changed,
                on_update=lambda _old, secret: self._secret_changed(secret),
                on_delete=self._secret_changed,
            )
        )

    def _secret_changed(self, secret: Secret) -> None:
        if secret.type == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
            self.queue.add(_secret_key(secret))

    def reconcile(self, key: str) -> None:
        """``syncSecret`` or ``syncServiceAccount``, by the key's kind."""
        kind, *fields = key.split(_SEP)
        if kind == "secret":
            namespace, name, uid, account, account_uid = fields
            # parseSecretQueueKey: a key without these is dropped.
            if namespace and name and uid and account:
                self._sync_secret(namespace, name, uid, account, account_uid)
        elif kind == "account":
            namespace, name, uid = fields
            if namespace and name and uid:
                self._sync_account(namespace, name, uid)

    def _account(
        self, namespace: str, name: str, uid: str, *, fetch: bool
    ) -> ServiceAccount | None:
        """``getServiceAccount``: the cached account with that uid (any, without one), else
        (``fetch``) a live read; None when there is none."""
        account = self.service_accounts.get(name, namespace)
        if account is not None and (not uid or uid == account.metadata.uid):
            return account
        if not fetch:
            return None
        try:
            account = self.client.get(ServiceAccount, name, namespace)
        except errors.NotFoundError:
            return None
        return account if not uid or uid == account.metadata.uid else None

    def _sync_secret(
        self, namespace: str, name: str, uid: str, account_name: str, account_uid: str
    ) -> None:
        secret = self.secrets.get(name, namespace)
        if secret is not None and secret.metadata.uid != uid:
            secret = None
        if secret is None:
            if self._account(namespace, account_name, account_uid, fetch=False) is not None:
                self._remove_reference(namespace, account_name, account_uid, name)
            return
        account = self._account(namespace, account_name, account_uid, fetch=True)
        if account is None:
            self._delete_token(namespace, name, uid)
        else:
            self._populate(account, secret)

    def _sync_account(self, namespace: str, name: str, uid: str) -> None:
        """An account that is gone takes its token Secrets with it."""
        if self._account(namespace, name, uid, fetch=False) is not None:
            return
        gone = ServiceAccount(metadata=ObjectMeta(name=name, namespace=namespace, uid=uid))
        failure: errors.StatusError | None = None
        for secret in self.secrets.by_index(TOKEN_SECRET_INDEX, f"{namespace}/{name}"):
            if not is_token_of(secret, gone):
                continue
            try:
                self._delete_token(namespace, secret.metadata.name or "", secret.metadata.uid or "")
            except errors.StatusError as exc:
                failure = exc
        if failure is not None:
            raise failure

    def _delete_token(self, namespace: str, name: str, uid: str) -> None:
        """``deleteToken``: gone already, or replaced (the uid precondition), is done."""
        options = DeleteRequest(preconditions=Preconditions(uid=uid) if uid else None)
        try:
            self.client.delete(Secret, name, namespace, options=options)
        except (errors.NotFoundError, errors.ConflictError):
            return

    def _needs(self, secret: Secret) -> tuple[bool, bool, bool]:
        """``secretUpdateNeeded``: whether the CA, the namespace and the token are missing."""
        data = secret.data or {}
        needs_ca = bool(self.root_ca) and data.get(SERVICE_ACCOUNT_ROOT_CA_KEY) != self.root_ca
        needs_namespace = not data.get(SERVICE_ACCOUNT_NAMESPACE_KEY)
        needs_token = not data.get(SERVICE_ACCOUNT_TOKEN_KEY)
        return needs_ca, needs_namespace, needs_token

    def _populate(self, account: ServiceAccount, cached: Secret) -> None:
        """``generateTokenIfNeeded``: fill what a fresh copy of the Secret lacks."""
        if not any(self._needs(cached)):
            return
        meta = cached.metadata
        try:
            live = self.client.get(Secret, meta.name or "", meta.namespace)
        except errors.NotFoundError:
            return
        if live.metadata.resource_version != meta.resource_version:
            # The informer is behind; its update event brings the Secret back here.
            return
        needs_ca, needs_namespace, needs_token = self._needs(live)
        if not (needs_ca or needs_namespace or needs_token):
            return
        data = dict(live.data or {})
        if needs_ca:
            data[SERVICE_ACCOUNT_ROOT_CA_KEY] = self.root_ca
        if needs_namespace:
            data[SERVICE_ACCOUNT_NAMESPACE_KEY] = (live.metadata.namespace or "").encode()
        if needs_token:
            data[SERVICE_ACCOUNT_TOKEN_KEY] = self.generate_token(account, live).encode()
        annotations = dict(live.metadata.annotations or {})
        annotations[SERVICE_ACCOUNT_NAME_KEY] = account.metadata.name or ""
        annotations[SERVICE_ACCOUNT_UID_KEY] = account.metadata.uid or ""
        updated = evolve(live, data=data, metadata=evolve(live.metadata, annotations=annotations))
        try:
            self.client.update(updated)
        except (errors.ConflictError, errors.NotFoundError):
            # Someone else wrote it (an update event follows) or it is gone.
            return

    def _remove_reference(
        self, namespace: str, account_name: str, account_uid: str, secret_name: str
    ) -> None:
        """``removeSecretReference`` under ``RetryOnConflict``: unlist a deleted Secret."""
        for _ in range(REMOVE_REFERENCE_ATTEMPTS):
            try:
                account = self.client.get(ServiceAccount, account_name, namespace)
            except errors.NotFoundError:
                return
            if account_uid and account_uid != account.metadata.uid:
                return
            references = account.secrets or ()
            kept = tuple(ref for ref in references if ref.name != secret_name)
            if len(kept) == len(references):
                return
            try:
                self.client.update(evolve(account, secrets=kept))
            except errors.NotFoundError:
                return
            except errors.ConflictError:
                continue
            return
        LOG.error(
            "removing secret reference %s from %s/%s: conflicts",
            secret_name,
            namespace,
            account_name,
        )
