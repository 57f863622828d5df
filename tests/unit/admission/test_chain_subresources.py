"""The admission chain skips, on a subresource request (``pods/status``, ``pods/binding``,
``deployments/scale``, ...), the plugins that declare ``ignores_subresources``: each must
be one whose guards let no subresource request through, as upstream's plugins return at
once when ``a.GetSubresource() != ""`` (``plugin/pkg/admission/resourcequota/admission.go``
``Validate``, ``limitranger.go`` ``SupportsAttributes``, ``priority/admission.go``
``Admit``, ``runtimeclass/admission.go``, ``defaulttolerationseconds``, ``storage``,
``network/defaultingressclass``).

The differential test calls every declaring plugin of the default chain with objects that
its main-resource path would change or refuse, as a request on every subresource of their
kind, and checks that it returns the object as given, raises nothing and records nothing:
the same outcome as not calling it.
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
from kubeprio.api import errors, kinds
from kubeprio.api.core import Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.tenant import Tenant, TenantPriorityClasses, TenantSpec
from tests.builders import pod, stored_listers

USER = UserInfo("alice", ("system:authenticated",))
NAMESPACE = "team-a"


def _chain() -> AdmissionChain:
    # A tenant owning the namespace with an allowlist the pod is outside of: on the main
    # resource, TenantPriorityClass refuses it.
    tenant = Tenant(
        metadata=ObjectMeta(name="t"),
        spec=TenantSpec(
            namespaces=(NAMESPACE,), priority_classes=TenantPriorityClasses(allowed=("low",))
        ),
    )
    _store, listers = stored_listers(tenant)
    return default_chain(
        listers,
        service_account_rng=random.Random(0),
        authorize_signer=lambda _user, _verb, _signer: False,
    )


def _pods() -> list[Pod]:
    """Pods the main-resource path would change or refuse: a system class for a user
    outside ``system:masters``, an unknown runtime class, no tolerations to default."""
    base = pod("p", NAMESPACE).build()
    spec = base.spec or PodSpec()
    return [
        base,
        evolve(
            base,
            spec=evolve(
                spec, priority_class_name="system-cluster-critical", runtime_class_name="missing"
            ),
        ),
    ]


def _object_of(info: kinds.ResourceInfo) -> list[Any]:
    if info.model is Pod:
        return _pods()
    if info.model is PersistentVolumeClaim:
        return [PersistentVolumeClaim(metadata=ObjectMeta(name="c", namespace=NAMESPACE))]
    namespace = NAMESPACE if info.namespaced else ""
    return [info.model(metadata=ObjectMeta(name="x", namespace=namespace, resource_version="1"))]


def _cases() -> list[tuple[str, str, kinds.ResourceInfo, str]]:
    chain = _chain()
    cases = []
    for phase, plugins in (("admit", chain.mutating), ("validate", chain.validating)):
        for plugin in plugins:
            if not getattr(plugin, "ignores_subresources", False):
                continue
            for info in kinds.RESOURCES:
                for sub in info.subresources:
                    cases.append((phase, plugin.name, info, sub.name))
    return cases


CASES = _cases()


def test_the_plugins_that_guard_on_subresources_declare_it() -> None:
    declaring = {name for _phase, name, _info, _sub in CASES}
    assert {
        "LimitRanger",
        "Priority",
        "RuntimeClass",
        "SystemPriorityClass",
        "TenantPriorityClass",
        "DefaultTolerationSeconds",
        "ResourceQuota",
    } <= declaring
    # ServiceAccount acts on pods/ephemeralcontainers; ValidatingAdmissionPolicy on any
    # subresource a policy names: neither may be skipped.
    assert not declaring & {"ServiceAccount", "ValidatingAdmissionPolicy"}


def test_the_pods_are_changed_or_refused_on_the_main_resource() -> None:
    """The objects below are sensitive: without the subresource, the chain acts on them."""
    chain = _chain()
    info = kinds.for_model(Pod)
    for obj in _pods():
        request = AdmissionRequest(Operation.CREATE, info, obj, None, NAMESPACE, "p", user=USER)
        outcome = AdmissionOutcome()
        try:
            changed = chain.mutate(request, outcome)
            chain.validate(request, outcome)
        except errors.StatusError:
            continue
        assert changed is not obj


@pytest.mark.parametrize(
    ("phase", "plugin_name", "info", "subresource"),
    CASES,
    ids=[f"{p}-{n}-{i.plural}-{s}" for p, n, i, s in CASES],
)
@pytest.mark.parametrize("operation", [Operation.CREATE, Operation.UPDATE])
def test_a_plugin_skipped_for_a_subresource_would_have_let_it_through(
    phase: str, plugin_name: str, info: kinds.ResourceInfo, subresource: str, operation: Operation
) -> None:
    chain = _chain()
    plugins = chain.mutating if phase == "admit" else chain.validating
    plugin: Any = next(p for p in plugins if p.name == plugin_name)
    for obj in _object_of(info):
        request = AdmissionRequest(
            operation=operation,
            resource=info,
            obj=obj,
            old_obj=obj if operation is Operation.UPDATE else None,
            namespace=obj.metadata.namespace or "",
            name=obj.metadata.name or "",
            subresource=subresource,
            user=USER,
        )
        outcome = AdmissionOutcome()
        if phase == "admit":
            assert plugin.admit(request, outcome) is obj
        else:
            plugin.validate(request, outcome)
        assert outcome == AdmissionOutcome()


class _Counting:
    """A plugin for every kind that ignores subresources, counting its calls."""

    name = "Counting"
    ignores_subresources = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        self.calls.append(f"admit {request.subresource or '-'}")
        return request.obj

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        self.calls.append(f"validate {request.subresource or '-'}")


def test_the_chain_skips_a_subresource_ignoring_plugin_for_subresources_only() -> None:
    counting = _Counting()
    chain = AdmissionChain(mutating=(counting,), validating=(counting,))
    obj = pod("p").build()
    info = kinds.for_model(Pod)
    for subresource in ("status", "", "binding"):
        request = AdmissionRequest(
            Operation.UPDATE, info, obj, obj, "default", "p", subresource=subresource
        )
        assert chain.mutate(request, AdmissionOutcome()) is obj
        chain.validate(request, AdmissionOutcome())
    assert counting.calls == ["admit -", "validate -"]
