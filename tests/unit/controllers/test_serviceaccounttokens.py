"""The tokens controller (``controllers.serviceaccounttokens``).

Upstream rules checked (``pkg/controller/serviceaccount/tokens_controller.go``, v1.32):

* ``syncSecret`` / ``generateTokenIfNeeded``: a token Secret whose account exists gets
  ``token`` (from the generator, for that account and Secret), ``namespace``, ``ca.crt``
  and the name and uid annotations; a token already there is kept, a CA that differs is
  replaced; other Secrets are not touched;
* a token Secret whose account does not exist (never did, or another incarnation by the
  uid annotation) is deleted;
* ``syncServiceAccount`` / ``deleteTokens``: a deleted account's token Secrets go with it
  (``IsServiceAccountToken``: the name annotation, and the uid annotation when set);
* ``removeSecretReference``: a deleted token Secret leaves its account's ``secrets`` list.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.api.core import ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.secret import (
    SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    SERVICE_ACCOUNT_NAME_KEY,
    SERVICE_ACCOUNT_UID_KEY,
    Secret,
)
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.client.informer import Informer
from kubeprio.controllers.serviceaccounttokens import TokensController
from tests.driving import Driver

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _generate(account: ServiceAccount, secret: Secret) -> str:
    return f"token:{account.metadata.name}:{account.metadata.uid}:{secret.metadata.name}"


class World:
    def __init__(self, api: Any, clock: Any) -> None:
        self.api = api
        accounts: Informer[ServiceAccount] = Informer(api, ServiceAccount)
        secrets: Informer[Secret] = Informer(api, Secret)
        self.controller = TokensController(
            api, clock=clock, rng=random.Random(0), service_accounts=accounts,
            secrets=secrets, root_ca=CA, generate_token=_generate,
        )  # fmt: skip
        self.driver = Driver(clock, [accounts, secrets], [self.controller])

    def account(self, name: str, **fields: Any) -> ServiceAccount:
        created = self.api.create(
            ServiceAccount(metadata=ObjectMeta(name=name, namespace="default"), **fields)
        )
        self.driver.settle()
        return created  # type: ignore[no-any-return]

    def token_secret(self, name: str, account: str, uid: str = "", **fields: Any) -> None:
        annotations = {SERVICE_ACCOUNT_NAME_KEY: account}
        if uid:
            annotations[SERVICE_ACCOUNT_UID_KEY] = uid
        self.api.create(
            Secret(
                metadata=ObjectMeta(name=name, namespace="default", annotations=annotations),
                type=SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
                **fields,
            )
        )
        self.driver.settle()

    def secret(self, name: str) -> Secret | None:
        found = [s for s in self.api.list(Secret, "default").items if s.metadata.name == name]
        return found[0] if found else None


@pytest.fixture
def world(api, clock) -> World:
    return World(api, clock)


def test_token_secret_is_filled_for_its_account(world):
    account = world.account("robot")
    world.token_secret("robot-token", "robot")
    secret = world.secret("robot-token")
    uid = account.metadata.uid
    assert dict(secret.data) == {
        "ca.crt": CA,
        "namespace": b"default",
        "token": f"token:robot:{uid}:robot-token".encode(),
    }
    assert secret.metadata.annotations == {
        SERVICE_ACCOUNT_NAME_KEY: "robot",
        SERVICE_ACCOUNT_UID_KEY: uid,
    }


def test_existing_token_is_kept_and_a_stale_ca_replaced(world):
    world.account("robot")
    world.token_secret(
        "robot-token", "robot", data={"token": b"mine", "ca.crt": b"old", "namespace": b"x"}
    )
    secret = world.secret("robot-token")
    assert (secret.data["token"], secret.data["ca.crt"], secret.data["namespace"]) == (
        b"mine",
        CA,
        b"x",
    )


def test_secret_for_a_missing_account_is_deleted(world):
    world.token_secret("ghost-token", "ghost")
    assert world.secret("ghost-token") is None


def test_secret_for_another_incarnation_is_deleted(world):
    world.account("robot")
    world.token_secret("stale-token", "robot", uid="not-the-uid")
    assert world.secret("stale-token") is None


def test_other_secrets_are_left_alone(world):
    world.api.create(Secret(metadata=ObjectMeta(name="plain", namespace="default")))
    world.driver.settle()
    assert world.secret("plain").data is None


def test_deleted_account_takes_its_tokens(world):
    robot = world.account("robot")
    world.account("other")
    world.token_secret("robot-token", "robot")
    world.token_secret("robot-token-2", "robot", uid=robot.metadata.uid)
    world.token_secret("other-token", "other")
    world.api.delete(ServiceAccount, "robot", "default")
    world.driver.settle()
    assert world.secret("robot-token") is None
    assert world.secret("robot-token-2") is None
    assert world.secret("other-token") is not None


def test_deleted_secret_leaves_the_accounts_list(world):
    world.account(
        "robot", secrets=(ObjectReference(name="robot-token"), ObjectReference(name="keep"))
    )
    world.token_secret("robot-token", "robot")
    world.api.delete(Secret, "robot-token", "default")
    world.driver.settle()
    account = world.api.get(ServiceAccount, "robot", "default")
    assert [ref.name for ref in account.secrets] == ["keep"]
