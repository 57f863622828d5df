"""Listers read straight from the store, for admission inside the API server.

Admission must see the latest committed state (upstream's admission plugins use
informers, but a single-process server can read its own store consistently).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from kubeprio.api import kinds
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.core import Namespace
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.ingress import IngressClass
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.service import Service
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.storageclass import StorageClass
from kubeprio.api.tenant import Tenant
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store

T = TypeVar("T")


class StoreLister(Generic[T]):
    """A ``client.informer.Lister`` over one resource of a store."""

    def __init__(
        self, store: Store, model: type[T], info: kinds.ResourceInfo | None = None
    ) -> None:
        self._store = store
        self._info = info or kinds.for_model(model)

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """Return the object or None."""
        key = ObjectKey(self._info.plural, namespace or "", name)
        try:
            return self._store.get(key)  # type: ignore[return-value]
        except KeyNotFoundError:
            return None

    def list(self, namespace: str | None = None) -> list[T]:
        """Return the objects sorted by namespace/name."""
        items, _ = self._store.list(KeyPrefix(self._info.plural, namespace))
        return items  # type: ignore[return-value]

    def generation(self) -> int:
        """The store's generation of the resource (``client.versionedlister``)."""
        return self._store.generation(self._info.plural)


class StoreListers:
    """The ``admission.chain.Listers`` bundle backed by a store."""

    def __init__(self, store: Store) -> None:
        self._priority_classes = StoreLister(store, PriorityClass)
        self._tenants = StoreLister(store, Tenant)
        self._namespaces = StoreLister(store, Namespace)
        self._resource_quotas = StoreLister(store, ResourceQuota)
        self._service_accounts = StoreLister(store, ServiceAccount)
        self._limit_ranges = StoreLister(store, LimitRange)
        self._storage_classes = StoreLister(store, StorageClass)
        self._runtime_classes = StoreLister(store, RuntimeClass)
        self._ingress_classes = StoreLister(store, IngressClass)
        self._store = store
        self._policies = StoreLister(store, ValidatingAdmissionPolicy)
        self._policy_bindings = StoreLister(store, ValidatingAdmissionPolicyBinding)
        # What the webhook admission plugins read (admission.webhookdispatch).
        self._mutating_webhook_configurations = StoreLister(store, MutatingWebhookConfiguration)
        self._validating_webhook_configurations = StoreLister(store, ValidatingWebhookConfiguration)
        self._services = StoreLister(store, Service)
        self._endpoints = StoreLister(store, Endpoints)

    @property
    def priority_classes(self) -> StoreLister[PriorityClass]:
        """All PriorityClasses."""
        return self._priority_classes

    @property
    def tenants(self) -> StoreLister[Tenant]:
        """All Tenants."""
        return self._tenants

    @property
    def namespaces(self) -> StoreLister[Namespace]:
        """All Namespaces."""
        return self._namespaces

    @property
    def resource_quotas(self) -> StoreLister[ResourceQuota]:
        """All ResourceQuotas."""
        return self._resource_quotas

    @property
    def service_accounts(self) -> StoreLister[ServiceAccount]:
        """All ServiceAccounts."""
        return self._service_accounts

    @property
    def limit_ranges(self) -> StoreLister[LimitRange]:
        """All LimitRanges."""
        return self._limit_ranges

    @property
    def storage_classes(self) -> StoreLister[StorageClass]:
        """All StorageClasses."""
        return self._storage_classes

    @property
    def runtime_classes(self) -> StoreLister[RuntimeClass]:
        """All RuntimeClasses."""
        return self._runtime_classes

    @property
    def ingress_classes(self) -> StoreLister[IngressClass]:
        """All IngressClasses."""
        return self._ingress_classes

    # ValidatingAdmissionPolicy: policies, bindings, parameters of any kind.
    @property
    def validating_admission_policies(self) -> StoreLister[ValidatingAdmissionPolicy]:
        """All ValidatingAdmissionPolicies."""
        return self._policies

    @property
    def validating_admission_policy_bindings(
        self,
    ) -> StoreLister[ValidatingAdmissionPolicyBinding]:
        """All ValidatingAdmissionPolicyBindings."""
        return self._policy_bindings

    def of_kind(self, info: kinds.ResourceInfo) -> StoreLister[Any]:
        """The objects of any stored kind (a policy's ``paramKind``)."""
        return StoreLister(self._store, info.model, info)

    # --- the webhook plugins' listers (admission.webhookdispatch.WebhookListers) -----------

    @property
    def mutating_webhook_configurations(self) -> StoreLister[MutatingWebhookConfiguration]:
        """All MutatingWebhookConfigurations."""
        return self._mutating_webhook_configurations

    @property
    def validating_webhook_configurations(self) -> StoreLister[ValidatingWebhookConfiguration]:
        """All ValidatingWebhookConfigurations."""
        return self._validating_webhook_configurations

    @property
    def services(self) -> StoreLister[Service]:
        """All Services."""
        return self._services

    @property
    def endpoints(self) -> StoreLister[Endpoints]:
        """All Endpoints."""
        return self._endpoints
