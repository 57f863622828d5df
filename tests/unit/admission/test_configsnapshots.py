"""The webhook plugins' configuration snapshot follows its configurations, and only them.

Upstream's webhook plugins read their configurations through a ``hookSource`` that an
informer keeps current (``webhook/configuration/mutating_webhook_manager.go``): a new,
changed or deleted configuration takes effect on the next request, and a request does
not list the configurations. kubeprio's ``_Source`` compares the lister's generation
(``Store.generation``) instead; these tests count the lists it makes.
"""

from __future__ import annotations

from typing import Any

from kubeprio.admission.webhookdispatch import _Source
from kubeprio.api.core import Pod
from kubeprio.api.model import evolve
from kubeprio.api.serialization import from_dict
from kubeprio.api.webhookconfiguration import MutatingWebhookConfiguration
from kubeprio.apiserver.listers import StoreLister
from kubeprio.apiserver.webhookwaits import WebhookWaits
from kubeprio.store.interface import ObjectKey
from kubeprio.store.memory import MemoryStore


class CountingLister:
    """A ``StoreLister`` that counts its lists."""

    def __init__(self, store: MemoryStore) -> None:
        self._inner = StoreLister(store, MutatingWebhookConfiguration)
        self.lists = 0

    def get(self, name: str, namespace: str | None = None) -> Any:
        return self._inner.get(name, namespace)

    def list(self, namespace: str | None = None) -> list[MutatingWebhookConfiguration]:
        self.lists += 1
        return self._inner.list(namespace)

    def generation(self) -> int:
        return self._inner.generation()


def _configuration(name: str, resource: str) -> MutatingWebhookConfiguration:
    hook = {
        "name": f"{resource}.example.com",
        "clientConfig": {"url": "https://hooks.example.com/"},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": [resource],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    return from_dict(MutatingWebhookConfiguration, {"metadata": {"name": name}, "webhooks": [hook]})


def _names(source: _Source[Any], resource: str) -> list[str]:
    return [entry.webhook.name or "" for entry in source.index().candidates("", resource)]


def test_the_snapshot_is_listed_again_only_when_a_configuration_changes() -> None:
    store = MemoryStore()
    lister = CountingLister(store)
    source: _Source[Any] = _Source(lister)
    key = ObjectKey("mutatingwebhookconfigurations", "", "hooks")

    assert _names(source, "pods") == []
    assert _names(source, "pods") == []
    assert lister.lists == 1

    pods_hook = store.create(key, _configuration("hooks", "pods"))
    assert _names(source, "pods") == ["pods.example.com"]  # a new one takes effect at once
    store.create(ObjectKey("pods", "default", "web"), from_dict(Pod, {"metadata": {"name": "web"}}))
    assert _names(source, "pods") == ["pods.example.com"]
    assert lister.lists == 2  # a write of another resource lists nothing

    changed = evolve(_configuration("hooks", "services"), metadata=pods_hook.metadata)
    store.update(key, changed, expected_revision=None)
    assert _names(source, "pods") == []
    assert _names(source, "services") == ["services.example.com"]
    assert lister.lists == 3

    store.delete(key)
    assert _names(source, "services") == []
    assert lister.lists == 4


class _Service:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store


def test_the_webhook_wait_check_sees_a_configuration_come_and_go() -> None:
    """``WebhookWaits`` runs a write in attempts only while a configuration exists."""
    store = MemoryStore()
    waits = WebhookWaits(_Service(store))  # type: ignore[arg-type]
    try:
        key = ObjectKey("mutatingwebhookconfigurations", "", "hooks")
        assert not waits.configured()
        store.create(key, _configuration("hooks", "pods"))
        assert waits.configured()
        assert waits.configured()
        store.delete(key)
        assert not waits.configured()
    finally:
        waits.close()
