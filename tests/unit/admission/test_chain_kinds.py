"""The admission chain calls a plugin only for the kinds it declares (``admits_kinds``,
``validates_kinds``): a plugin skipped for a kind must be one that would have let the
write through unchanged had it been called.

The differential test calls every declaring plugin of the default chain with an object of
every stored kind it does not declare (create and update, by a user outside
``system:masters``) and checks that it returns the object as given, raises nothing and
records nothing: the same outcome as not calling it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.admission.defaults import default_chain
from kubeprio.api import kinds
from kubeprio.api.core import Event, Pod
from kubeprio.api.meta import ObjectMeta
from tests.builders import pod, stored_listers

USER = UserInfo("alice", ("system:authenticated",))


def _chain() -> AdmissionChain:
    _store, listers = stored_listers()
    return default_chain(
        listers,
        service_account_rng=random.Random(0),
        authorize_signer=lambda _user, _verb, _signer: False,
    )


def _object_of(info: kinds.ResourceInfo) -> Any:
    namespace = "default" if info.namespaced else ""
    return info.model(metadata=ObjectMeta(name="x", namespace=namespace, resource_version="1"))


def _undeclared_cases() -> list[tuple[str, str, kinds.ResourceInfo]]:
    chain = _chain()
    cases = []
    for phase, plugins, declaration in (
        ("admit", chain.mutating, "admits_kinds"),
        ("validate", chain.validating, "validates_kinds"),
    ):
        for plugin in plugins:
            declared = getattr(plugin, declaration, None)
            if declared is None:
                continue
            for info in kinds.RESOURCES:
                if not issubclass(info.model, declared):
                    cases.append((phase, plugin.name, info))
    return cases


CASES = _undeclared_cases()


def test_the_pod_only_plugins_declare_their_kinds() -> None:
    """The cases below are not empty: the plugins that guard on a kind declare it."""
    declaring = {name for _phase, name, _info in CASES}
    assert {"ServiceAccount", "LimitRanger", "Priority", "RuntimeClass"} <= declaring
    assert "DefaultTolerationSeconds" in declaring


@pytest.mark.parametrize(
    ("phase", "plugin_name", "info"), CASES, ids=[f"{p}-{n}-{i.plural}" for p, n, i in CASES]
)
@pytest.mark.parametrize("operation", [Operation.CREATE, Operation.UPDATE])
def test_a_plugin_skipped_for_a_kind_would_have_let_it_through(
    phase: str, plugin_name: str, info: kinds.ResourceInfo, operation: Operation
) -> None:
    chain = _chain()
    plugins = chain.mutating if phase == "admit" else chain.validating
    plugin: Any = next(p for p in plugins if p.name == plugin_name)
    obj = _object_of(info)
    request = AdmissionRequest(
        operation=operation,
        resource=info,
        obj=obj,
        old_obj=obj if operation is Operation.UPDATE else None,
        namespace=obj.metadata.namespace,
        name="x",
        user=USER,
    )
    outcome = AdmissionOutcome()
    if phase == "admit":
        assert plugin.admit(request, outcome) is obj
    else:
        plugin.validate(request, outcome)
    assert outcome == AdmissionOutcome()


class _Counting:
    """A mutating and validating plugin for pods only, counting its calls."""

    name = "Counting"
    admits_kinds = validates_kinds = (Pod,)

    def __init__(self) -> None:
        self.calls: list[str] = []

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        self.calls.append("admit")
        return request.obj

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        self.calls.append("validate")


def test_the_chain_skips_a_plugin_for_the_kinds_it_does_not_declare() -> None:
    counting = _Counting()
    chain = AdmissionChain(mutating=(counting,), validating=(counting,))
    event = Event(metadata=ObjectMeta(name="e", namespace="default"))
    for obj, resource in (
        (event, kinds.for_model(Event)),
        (pod("p").build(), kinds.for_model(Pod)),
    ):
        request = AdmissionRequest(Operation.CREATE, resource, obj, None, "default", "x")
        chain.validate(request, AdmissionOutcome())
        assert chain.mutate(request, AdmissionOutcome()) is obj
    assert counting.calls == ["validate", "admit"]  # the pod's only
