"""What every namespace holds on a real cluster: the ``default`` ServiceAccount and the
``kube-root-ca.crt`` ConfigMap.

Upstream: ``pkg/controller/serviceaccount/serviceaccounts_controller.go`` (create the
missing ``default`` account in every Active namespace; a deleted account's namespace is
synced again) and ``pkg/controller/certificates/rootcacertpublisher/publisher.go`` (create
``kube-root-ca.crt`` with ``ca.crt`` and the description annotation; restore its data and
annotation when an update or delete touches it; leave other ConfigMaps alone).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.client.informer import Informer
from kubeprio.controllers.rootcacert import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CONFIG_MAP,
    RootCACertPublisher,
)
from kubeprio.controllers.serviceaccount import ServiceAccountsController
from tests.driving import Driver

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
SYSTEM_NAMESPACES = ["default", "kube-node-lease", "kube-public", "kube-system"]


class Fixture:
    def __init__(self, api: Any, clock: Any) -> None:
        self.api = api
        namespaces: Informer[Namespace] = Informer(api, Namespace)
        accounts: Informer[ServiceAccount] = Informer(api, ServiceAccount)
        config_maps: Informer[ConfigMap] = Informer(api, ConfigMap)
        self.accounts = ServiceAccountsController(
            api, clock=clock, rng=random.Random(0), namespaces=namespaces,
            service_accounts=accounts,
        )  # fmt: skip
        self.publisher = RootCACertPublisher(
            api, clock=clock, rng=random.Random(0), root_ca=CA, namespaces=namespaces,
            config_maps=config_maps,
        )  # fmt: skip
        self.driver = Driver(
            clock, [namespaces, accounts, config_maps], [self.accounts, self.publisher]
        )

    def settle(self) -> None:
        self.driver.settle()

    def names(self, kind: type[Any], name: str) -> list[str]:
        return sorted(
            obj.metadata.namespace or "" for obj in self.api.list(kind).items
            if obj.metadata.name == name
        )  # fmt: skip


@pytest.fixture
def world(api, clock):
    fixture = Fixture(api, clock)
    fixture.settle()
    return fixture


def test_every_namespace_gets_a_default_account_and_the_root_ca(world):
    assert world.names(ServiceAccount, "default") == SYSTEM_NAMESPACES
    assert world.names(ConfigMap, ROOT_CA_CONFIG_MAP) == SYSTEM_NAMESPACES
    world.api.create(Namespace(metadata=ObjectMeta(name="team-a")))
    world.settle()
    account = world.api.get(ServiceAccount, "default", "team-a")
    # Only a name: no token secret (not generated since 1.24), no automount setting.
    assert (account.secrets, account.automount_service_account_token) == (None, None)
    config_map = world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "team-a")
    assert config_map.data == {"ca.crt": CA.decode()}
    assert config_map.metadata.annotations == {DESCRIPTION_ANNOTATION: DESCRIPTION}


def test_a_deleted_default_account_comes_back(world):
    before = world.api.get(ServiceAccount, "default", "default")
    world.api.delete(ServiceAccount, "default", "default")
    world.settle()
    after = world.api.get(ServiceAccount, "default", "default")
    assert after.metadata.uid != before.metadata.uid


def test_other_accounts_are_left_alone(world):
    world.api.create(ServiceAccount(metadata=ObjectMeta(name="bot", namespace="default")))
    world.settle()
    world.api.delete(ServiceAccount, "bot", "default")
    world.settle()
    with pytest.raises(errors.NotFoundError):
        world.api.get(ServiceAccount, "bot", "default")


def test_a_terminating_namespace_gets_nothing(world):
    # syncNamespace: a namespace that is not Active (being deleted) is skipped.
    world.api.create(Namespace(metadata=ObjectMeta(name="going", finalizers=("example.com/hold",))))
    world.settle()
    world.api.delete(Namespace, "going")  # stays, marked, until its finalizer goes
    world.api.delete(ServiceAccount, "default", "going")
    world.settle()
    with pytest.raises(errors.NotFoundError):
        world.api.get(ServiceAccount, "default", "going")


@pytest.mark.parametrize(
    "change",
    [
        {"data": {"ca.crt": "tampered"}},
        {"data": {"ca.crt": CA.decode(), "extra": "x"}},
        {"annotations": {}},
    ],
    ids=["data", "added-key", "annotation"],
)
def test_an_edited_root_ca_config_map_is_restored(world, change):
    current = world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "default")
    edited = evolve(
        current,
        data=change.get("data", current.data),
        metadata=evolve(
            current.metadata,
            labels={"mine": "yes"},
            annotations=change.get("annotations", current.metadata.annotations),
        ),
    )
    world.api.update(edited)
    world.settle()
    restored = world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "default")
    assert restored.data == {"ca.crt": CA.decode()}
    assert restored.metadata.annotations == {DESCRIPTION_ANNOTATION: DESCRIPTION}
    assert restored.metadata.labels == {"mine": "yes"}  # the rest of the edit stays


def test_a_deleted_root_ca_config_map_is_recreated(world):
    world.api.delete(ConfigMap, ROOT_CA_CONFIG_MAP, "kube-public")
    world.settle()
    assert world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "kube-public").data == {
        "ca.crt": CA.decode()
    }


def test_a_correct_root_ca_config_map_is_not_rewritten(world):
    before = world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "default")
    world.api.create(ConfigMap(metadata=ObjectMeta(name="other", namespace="default")))
    world.api.delete(ConfigMap, "other", "default")
    world.settle()
    after = world.api.get(ConfigMap, ROOT_CA_CONFIG_MAP, "default")
    assert after.metadata.resource_version == before.metadata.resource_version
