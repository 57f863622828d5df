"""The local APIService set of ``kubeprio serve`` (``apiserver.autoregister``).

Upstream rules: ``cmd/kube-apiserver/app/aggregator.go`` (``apiVersionPriorities``,
``makeAPIService`` skips group/versions the table does not list, ``apiServicesToRegister``
with the ``onstart`` label), ``pkg/controlplane/controller/crdregistration`` (one
APIService per served CRD version, priorities 1000/100, removed when no CRD serves it),
``kube-aggregator/pkg/controllers/autoregister`` (unlabelled APIServices are left alone),
``kube-aggregator/pkg/registry/apiservice/strategy.go`` (a local APIService is Available at
creation: ``NewLocalAvailableAPIServiceCondition``) and the remote availability controller
(``ServiceNotFound``: ``service/<name> in "<ns>" is not present``).
"""

from __future__ import annotations

from typing import Any

from kubeprio.api import kinds, serialization
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import APIService, available_condition
from kubeprio.api.model import evolve
from kubeprio.api.service import Service
from kubeprio.apiserver.autoregister import (
    APIServiceRegistration,
    built_in_api_services,
    crd_api_services,
    plan_crd_sync,
)
from kubeprio.apiserver.service import ApiService

BUILT_IN = [
    "v1.", "v1.scheduling.k8s.io", "v1.policy", "v1.apps", "v2.autoscaling", "v1.batch",
    "v1.coordination.k8s.io", "v1.storage.k8s.io", "v1.node.k8s.io", "v1.networking.k8s.io",
    "v1.discovery.k8s.io", "v1.certificates.k8s.io", "v1.rbac.authorization.k8s.io",
    "v1.flowcontrol.apiserver.k8s.io", "v1.admissionregistration.k8s.io",
    "v1.apiextensions.k8s.io", "v1.autoscaling", "v1.events.k8s.io",
    "v1.authentication.k8s.io", "v1.authorization.k8s.io",
]  # fmt: skip


def crd(
    group: str = "example.com", versions: tuple[tuple[str, bool], ...] = (("v1", True),)
) -> Any:
    return serialization.from_dict(
        CustomResourceDefinition,
        {
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {
                    "plural": "widgets",
                    "singular": "widget",
                    "kind": "Widget",
                    "listKind": "WidgetList",
                },
                "versions": [
                    {
                        "name": name,
                        "served": served,
                        "storage": position == 0,
                        "schema": {"openAPIV3Schema": {"type": "object"}},
                    }
                    for position, (name, served) in enumerate(versions)
                ],
            },
        },
    )


def started(api: ApiService) -> APIServiceRegistration:
    loop = APIServiceRegistration(api, clock=api.clock)
    loop.start()
    settle(loop)
    return loop


def settle(loop: APIServiceRegistration) -> None:
    """Pump and run until the loop has nothing left (its own writes come back once)."""
    for _ in range(6):
        loop.pump()
        if not loop.run_once():
            return
    raise AssertionError("the registration loop did not settle")


def stored(api: ApiService) -> dict[str, APIService]:
    return {s.metadata.name: s for s in api.list(APIService).items}


def test_built_in_set_is_upstreams_table_for_the_served_group_versions() -> None:
    """apiServicesToRegister: kubeprio.io and metrics.k8s.io are not in the table."""
    services = built_in_api_services(kinds.SERVED)
    assert sorted(s.metadata.name for s in services) == sorted(BUILT_IN)
    by_name = {s.metadata.name: s.spec for s in services}
    assert (by_name["v1."].group, by_name["v1."].version) == ("", "v1")
    assert (by_name["v1."].group_priority_minimum, by_name["v1."].version_priority) == (18000, 1)
    assert (
        by_name["v2.autoscaling"].group_priority_minimum,
        by_name["v2.autoscaling"].version_priority,
    ) == (17500, 30)
    assert by_name["v1.flowcontrol.apiserver.k8s.io"].version_priority == 21


def test_start_creates_available_local_api_services(api: ApiService) -> None:
    started(api)
    services = stored(api)
    assert sorted(services) == sorted(BUILT_IN)
    apps = serialization.to_dict(services["v1.apps"])
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert apps["spec"] == {
        "group": "apps",
        "version": "v1",
        "groupPriorityMinimum": 17800,
        "versionPriority": 15,
    }
    [condition] = apps["status"]["conditions"]
    assert {k: v for k, v in condition.items() if k != "lastTransitionTime"} == {
        "type": "Available",
        "status": "True",
        "reason": "Local",
        "message": "Local APIServices are always available",
    }


def test_crd_versions_come_and_go(api: ApiService) -> None:
    loop = started(api)
    api.create(crd(versions=(("v1", True), ("v2", False))))
    settle(loop)
    services = stored(api)
    assert "v2.example.com" not in services
    widget = serialization.to_dict(services["v1.example.com"])
    assert widget["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert widget["spec"]["groupPriorityMinimum"] == 1000
    assert widget["spec"]["versionPriority"] == 100
    assert available_condition(services["v1.example.com"]).reason == "Local"
    api.delete(CustomResourceDefinition, "widgets.example.com")
    settle(loop)
    # crdregistration_controller.go handleVersionUpdate: a terminating CRD still serves
    # its versions, so its APIService stays until the finalizer lets the CRD go.
    assert "v1.example.com" in stored(api)
    terminating = api.get(CustomResourceDefinition, "widgets.example.com")
    api.update_status(evolve(terminating, metadata=evolve(terminating.metadata, finalizers=None)))
    settle(loop)
    assert "v1.example.com" not in stored(api)
    assert sorted(stored(api)) == sorted(BUILT_IN)


def test_plan_leaves_unlabelled_api_services_alone() -> None:
    """autoregister only manages objects carrying its label."""
    wanted = crd_api_services([crd()], BUILT_IN)
    mine = serialization.from_dict(
        APIService,
        {"metadata": {"name": "v1.mine.io"}, "spec": {"group": "mine.io", "version": "v1"}},
    )
    plan = plan_crd_sync({"v1.mine.io": mine}, wanted)
    assert [s.metadata.name for s in plan.create] == ["v1.example.com"]
    assert plan.delete == ()
    assert crd_api_services([crd(group="apps")], ["v1.apps"]) == {}


def test_a_service_backed_api_service_is_reported_unavailable(api: ApiService) -> None:
    loop = started(api)
    api.create(
        serialization.from_dict(
            APIService,
            {
                "metadata": {"name": "v1beta1.metrics.example.io"},
                "spec": {
                    "group": "metrics.example.io",
                    "version": "v1beta1",
                    "groupPriorityMinimum": 100,
                    "versionPriority": 100,
                    "service": {"namespace": "default", "name": "metrics", "port": 443},
                },
            },
        )
    )
    settle(loop)
    condition = available_condition(api.get(APIService, "v1beta1.metrics.example.io"))
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "ServiceNotFound",
        'service/metrics in "default" is not present',
    )
    api.create(
        serialization.from_dict(
            Service,
            {
                "metadata": {"name": "metrics", "namespace": "default"},
                "spec": {"ports": [{"port": 443}]},
            },
        )
    )
    settle(loop)
    condition = available_condition(api.get(APIService, "v1beta1.metrics.example.io"))
    assert (condition.status, condition.reason) == ("False", "FailedDiscoveryCheck")
    assert condition.message.startswith("failing or missing response from https://")
    assert condition.message.endswith(
        ":443/apis/metrics.example.io/v1beta1: kubeprio does not proxy to aggregated API servers"
    )
