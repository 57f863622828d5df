"""A custom resource update without ``metadata.resourceVersion`` is refused after the
mutating phase.

Upstream v1.32: custom resources allow no unconditional update
(``customResourceStrategy.AllowUnconditionalUpdate`` and the status strategy's, in
``apiextensions-apiserver/pkg/registry/customresource/strategy.go``); the generic store's
``Update`` (``registry/generic/registry/store.go``) reads the resourceVersion of what
``objInfo.UpdatedObject`` returned (the body after the mutating admission of
``endpoints/handlers/update.go``) and answers ``NewInvalid`` on a GroupKind whose kind is
the resource, ``must be specified for an update``, when it is zero. A webhook that sets
the resourceVersion makes the write a conditional one.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.webhookconfiguration import MutatingWebhookConfiguration
from kubeprio.apiserver.service import ApiService
from tests.conftest import ManualClock
from tests.unit.admission.test_webhookdispatch import (
    InProcessCaller,
    allow,
    api,
    caller,
    hook,
    patching,
    register,
)
from tests.unit.controllers.crdstack import WIDGETS, CrdStack, widget

__all__ = ["api", "caller"]  # the fixtures this module uses

OBJECT_URL = WIDGETS.format(ns="a") + "/w"
RULE = {
    "operations": ["UPDATE"],
    "apiGroups": ["example.com"],
    "apiVersions": ["v1"],
    "resources": ["widgets", "widgets/status"],
}
MESSAGE = (
    'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
    "must be specified for an update"
)


@pytest.fixture
def stack(api: ApiService, clock: ManualClock) -> CrdStack:
    """The CRD stack over ``api`` with its webhook-calling chain, one Widget stored."""
    chain = api.admission
    built = CrdStack(api, clock)
    api.admission = chain
    built.create_crd()
    body = widget("w", "a", spec={"replicas": 2, "color": "red"})
    assert built.http.post(WIDGETS.format(ns="a"), json=body).status_code == 201
    return built


def _mutating(stack: CrdStack, caller: InProcessCaller, handler: Any) -> None:
    caller.handlers["/mutate"] = handler
    register(stack.api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[RULE]))


def _unversioned(stack: CrdStack, **changes: Any) -> dict[str, Any]:
    """The stored Widget without its resourceVersion, with ``changes``."""
    document: dict[str, Any] = stack.http.get(OBJECT_URL).json()
    del document["metadata"]["resourceVersion"]
    return {**document, **changes}


@pytest.mark.parametrize("subresource", ["", "/status"])
def test_the_webhook_is_called_then_the_update_is_refused(
    stack: CrdStack, caller: InProcessCaller, subresource: str
) -> None:
    _mutating(stack, caller, allow())
    before = stack.http.get(OBJECT_URL).json()
    body = _unversioned(stack, spec={"replicas": 3}, status={"replicas": 3})

    answer = stack.http.put(OBJECT_URL + subresource, json=body)

    assert answer.status_code == 422, answer.text
    status = answer.json()
    assert status["message"] == MESSAGE
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "widgets"
    assert status["details"]["group"] == "example.com"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0x0: must be specified for an update",
            "field": "metadata.resourceVersion",
        }
    ]
    assert caller.paths() == ["/mutate"]
    assert stack.http.get(OBJECT_URL).json() == before


def _set_stored_version(request: dict[str, Any]) -> dict[str, Any]:
    version = request["oldObject"]["metadata"]["resourceVersion"]
    return patching({"op": "add", "path": "/metadata/resourceVersion", "value": version})(request)


def test_a_webhook_that_sets_the_resource_version_makes_the_update_pass(
    stack: CrdStack, caller: InProcessCaller
) -> None:
    _mutating(stack, caller, _set_stored_version)

    answer = stack.http.put(OBJECT_URL, json=_unversioned(stack, spec={"replicas": 3}))

    assert answer.status_code == 200, answer.text
    assert stack.http.get(OBJECT_URL).json()["spec"] == {"replicas": 3}


def test_a_webhooks_status_change_on_a_main_write_is_dropped(
    stack: CrdStack, caller: InProcessCaller
) -> None:
    """customResourceStrategy.PrepareForUpdate keeps the stored status (status subresource)."""
    _mutating(stack, caller, patching({"op": "add", "path": "/status", "value": {"replicas": 9}}))
    document = stack.http.get(OBJECT_URL).json()

    answer = stack.http.put(OBJECT_URL, json={**document, "spec": {"replicas": 4}})

    assert answer.status_code == 200, answer.text
    assert "status" not in stack.http.get(OBJECT_URL).json()
    assert caller.paths() == ["/mutate"]
