"""The service account controller: a ``default`` ServiceAccount in every active namespace.

Mirrors ``pkg/controller/serviceaccount/serviceaccounts_controller.go`` with its default
options (``DefaultServiceAccountsControllerOptions``: one account, ``default``):

* a namespace that is added or updated is queued; so is the namespace of a deleted
  ServiceAccount, so ``kubectl delete sa default`` is undone at once, as on a real cluster;
* ``syncNamespace``: a namespace that is gone, or not ``Active`` (being deleted), gets
  nothing; otherwise each missing account is created with nothing but its name (no
  token Secret: clusters stopped generating those in 1.24). ``AlreadyExists`` is success
  (the informer may lag the store), and a refusal because the namespace is being deleted
  is not retried; other errors retry with backoff (``controllers.base``).

Event-driven: informer events queue namespace keys, ``run_once`` syncs the due ones, each
sync is one informer lookup per account. Serve wires it (``serve.server``), where the
ServiceAccount admission plugin refuses a namespace's pods until its ``default`` exists:
the driver runs this controller in the settle round that sees the namespace, a few loop
iterations after the write, before a client's next request arrives (docs/admission.md). Simulations run without either (no scheduling
outcome depends on service accounts). Must not import ``apiserver``, ``store``,
``admission``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.serviceaccount import DEFAULT_SERVICE_ACCOUNT, ServiceAccount
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller

NAMESPACE_ACTIVE: Final = "Active"


def is_active(namespace: Namespace | None) -> bool:
    """Whether content may be created in ``namespace``: it exists, is ``Active`` and is
    not being deleted."""
    if namespace is None or namespace.metadata.deletion_timestamp:
        return False
    phase = namespace.status.phase if namespace.status is not None else None
    return phase == NAMESPACE_ACTIVE


class ServiceAccountsController(Controller):
    """``ServiceAccountsController``: ensures the accounts every namespace has."""

    name = "service-account-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        namespaces: Informer[Namespace],
        service_accounts: Informer[ServiceAccount],
        accounts: Sequence[str] = (DEFAULT_SERVICE_ACCOUNT,),
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.namespaces = namespaces
        self.service_accounts = service_accounts
        self.accounts = tuple(accounts)
        namespaces.add_handler(
            FuncHandler(
                on_add=lambda ns: self.queue.add(ns.metadata.name or ""),
                on_update=lambda _old, ns: self.queue.add(ns.metadata.name or ""),
            )
        )
        service_accounts.add_handler(
            FuncHandler(on_delete=lambda sa: self.queue.add(sa.metadata.namespace or ""))
        )

    def event_target(self, key: str) -> ApiObject | None:
        """The namespace."""
        return self.namespaces.get(key)

    def reconcile(self, key: str) -> None:
        """``syncNamespace``: create the accounts the namespace lacks."""
        if not is_active(self.namespaces.get(key)):
            return
        for name in self.accounts:
            if self.service_accounts.get(name, key) is not None:
                continue
            account = ServiceAccount(metadata=ObjectMeta(name=name, namespace=key))
            try:
                self.client.create(account)
            except errors.AlreadyExistsError:
                continue
            except (errors.ForbiddenError, errors.NotFoundError):
                # The namespace went away or began terminating since the informer saw it.
                if is_active(self.namespaces.get(key)):
                    raise
                return
