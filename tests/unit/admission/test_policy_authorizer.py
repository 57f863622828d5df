"""A ValidatingAdmissionPolicy's ``authorizer`` asks the authorizer for the request's user.

Upstream v1.32: the policy validator binds ``authorizer`` and
``authorizer.requestResource`` to the request's user (``library.NewAuthorizerVal``,
``NewResourceAuthorizerVal``, ``admission/plugin/policy/validating``);
``authorizer.serviceAccount(ns, name)`` asks for ``serviceaccount.ServiceAccountInfo``'s
user. ``apiserver.policyauthz`` gives the chain's reasons as upstream's authorizers do
(none for ``system:masters`` and for a refusal).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission.chain import MASTERS_GROUP, UserInfo
from kubeprio.admission.defaults import default_chain
from kubeprio.admission.policyauthorizer import PolicyAuthorizer
from kubeprio.api import serialization
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.celauthz import AuthorizationAnswer, AuthorizationRequest
from kubeprio.api.core import Pod
from kubeprio.api.errors import StatusError
from kubeprio.apiserver import policyauthz
from kubeprio.apiserver.authz import Attributes, Decision
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

ALICE = UserInfo("alice", ("tenants",))
ADMIN = UserInfo("root", (MASTERS_GROUP,))


class FakeAuthorizer:
    """``root`` may do anything; ``system:serviceaccount:ci:deployer`` may delete pods."""

    def __init__(self) -> None:
        self.asked: list[tuple[UserInfo | None, AuthorizationRequest]] = []

    def __call__(self, user: UserInfo | None, check: AuthorizationRequest) -> AuthorizationAnswer:
        self.asked.append((user, check))
        name = user.name if user is not None else ""
        if name == "root" or (
            name == "system:serviceaccount:ci:deployer" and check.verb == "delete"
        ):
            return AuthorizationAnswer(True, reason=f"{name} may")
        return AuthorizationAnswer(False)


def service(
    store: MemoryStore, clock: ManualClock, authorize: PolicyAuthorizer | None
) -> ApiService:
    chain = default_chain(StoreListers(store), authorize_policy=authorize)
    return ApiService(store, clock=clock, rng=random.Random(1), admission=chain)


def install(api: ApiService, expression: str, message_expression: str = "") -> None:
    validation: dict[str, Any] = {"expression": expression, "message": "not authorized"}
    if message_expression:
        validation["messageExpression"] = message_expression
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["pods"],
    }
    api.create(serialization.from_dict(ValidatingAdmissionPolicy, {
        "metadata": {"name": "p"},
        "spec": {"matchConstraints": {"resourceRules": [rule]}, "validations": [validation]},
    }))  # fmt: skip
    api.create(serialization.from_dict(ValidatingAdmissionPolicyBinding, {
        "metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"]},
    }))  # fmt: skip


def pod(name: str = "web") -> Pod:
    return serialization.from_dict(Pod, {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })  # fmt: skip


CAN_DELETE_PODS = (
    "authorizer.group('').resource('pods').namespace('default').check('delete').allowed()"
)


def test_the_request_users_decision(store: MemoryStore, clock: ManualClock) -> None:
    authorizer = FakeAuthorizer()
    api = service(store, clock, authorizer)
    install(api, CAN_DELETE_PODS)
    with pytest.raises(StatusError) as raised:
        api.create_object(pod(), user=ALICE)
    assert raised.value.status.message == (
        "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied "
        "request: not authorized"
    )
    api.create_object(pod(), user=ADMIN)
    assert [user for user, _ in authorizer.asked] == [ALICE, ADMIN]
    assert authorizer.asked[0][1] == AuthorizationRequest(
        "delete", resource="pods", namespace="default"
    )


def test_request_resource_and_reason(store: MemoryStore, clock: ManualClock) -> None:
    authorizer = FakeAuthorizer()
    api = service(store, clock, authorizer)
    install(
        api,
        "!authorizer.requestResource.check('create').allowed()",
        "authorizer.requestResource.check('create').reason()",
    )
    with pytest.raises(StatusError) as raised:
        api.create_object(pod("mine"), user=ADMIN)
    assert raised.value.status.message.endswith("denied request: root may")
    assert authorizer.asked[0][1] == AuthorizationRequest(
        "create", resource="pods", namespace="default", name="mine"
    )


def test_a_service_account_is_asked_as_its_user(store: MemoryStore, clock: ManualClock) -> None:
    authorizer = FakeAuthorizer()
    api = service(store, clock, authorizer)
    install(
        api,
        "authorizer.serviceAccount('ci', 'deployer').group('').resource('pods').check('delete').allowed()",
    )
    api.create_object(pod(), user=ALICE)
    user, check = authorizer.asked[0]
    assert user == UserInfo(
        "system:serviceaccount:ci:deployer", ("system:serviceaccounts", "system:serviceaccounts:ci")
    )
    assert check.service_account == ("ci", "deployer")


def test_without_an_authorizer_checks_are_allowed(store: MemoryStore, clock: ManualClock) -> None:
    api = service(store, clock, None)
    install(api, CAN_DELETE_PODS)
    api.create_object(pod(), user=ALICE)


class ChainStub:
    """A ``ReviewingAuthorizer`` answering from a table of verbs."""

    def __init__(self, decisions: dict[str, Decision]) -> None:
        self.decisions = decisions
        self.asked: list[Attributes] = []

    def authorize(self, attrs: Attributes) -> bool:
        return self.decide(attrs).allowed

    def decide(self, attrs: Attributes) -> Decision:
        self.asked.append(attrs)
        return self.decisions[attrs.verb]

    def rules_for(self, user: UserInfo, namespace: str) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("user", "decision", "answer"),
    [
        (ALICE, Decision(True, 'RBAC: allowed by RoleBinding "x/default" of Role "r" to User "alice"'),
         AuthorizationAnswer(True, 'RBAC: allowed by RoleBinding "x/default" of Role "r" to User "alice"')),
        (ALICE, Decision(False, "kubeprio: alice is not a member of a tenant owning default"),
         AuthorizationAnswer(False, "")),
        (ADMIN, Decision(True, 'kubeprio: members of "system:masters" may do anything'),
         AuthorizationAnswer(True, "")),
        (None, Decision(False, "unused"), AuthorizationAnswer(True, "")),
    ],
)  # fmt: skip
def test_serves_reasons_are_upstreams(
    user: UserInfo | None, decision: Decision, answer: AuthorizationAnswer
) -> None:
    chain = ChainStub({"get": decision})
    check = AuthorizationRequest("get", resource="pods", namespace="default", name="web")
    assert policyauthz.answer(chain, user, check) == answer
    if user is not None:
        assert chain.asked == [
            Attributes(user, "get", resource="pods", namespace="default", name="web")
        ]


def test_a_path_check_is_a_non_resource_request() -> None:
    chain = ChainStub({"get": Decision(True)})
    policyauthz.answer(
        chain, ALICE, AuthorizationRequest("get", resource_request=False, path="/healthz")
    )
    assert chain.asked == [Attributes(ALICE, "get", resource_request=False, path="/healthz")]
