"""What changes when an admission plugin is off (``--disable-admission-plugins``).

A plugin that is off does nothing, as on a kube-apiserver started without it
(``enabledPluginNames`` leaves it out of the chain): ``Priority`` off leaves
``spec.priority`` unset (priority 0 for the scheduler, ``corev1helpers.PodPriority``), names
no class as the global default and refuses no unknown class; ``LimitRanger`` off applies no
defaults and no bounds; ``ResourceQuota`` off neither refuses nor charges; kubeprio's own
plugins off enforce nothing; ``ServiceAccount`` off (serve) gives a pod no account and no
token volume. Each test shows the object with the plugin on, then off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission import plugins
from kubeprio.admission.chain import UserInfo
from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tenant import Tenant, TenantPriorityClasses, TenantSpec
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import pod, priority_class
from tests.conftest import ManualClock
from tests.unit.admission.test_resourcequota import quota, store_quota

NS = "team-a"
ALICE = UserInfo("alice", ("system:authenticated",))
ON = plugins.DEFAULT


def make_api(enabled: plugins.EnabledPlugins, *, serve: bool = False) -> ApiService:
    """An API with the chain ``enabled`` gives (``serve``: with ServiceAccount's generator)."""
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(
        api.listers, enabled=enabled, service_account_rng=random.Random(1) if serve else None
    )
    api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
    api.create_object(priority_class("high", 1000, policy="Never"))
    return api


def off(*names: str) -> plugins.EnabledPlugins:
    return plugins.resolve(disable=names)


def spec_of(api: ApiService, obj: Pod) -> Any:
    return api.create_object(obj).obj.spec


# --- Priority --------------------------------------------------------------------------------


def test_priority_off_leaves_the_class_unresolved():
    obj = pod("p", NS).priority_class("high").build()
    spec = spec_of(make_api(ON), obj)
    assert (spec.priority_class_name, spec.priority, spec.preemption_policy) == (
        "high",
        1000,
        "Never",
    )
    spec = spec_of(make_api(off("Priority")), obj)
    assert (spec.priority_class_name, spec.priority, spec.preemption_policy) == (
        "high",
        None,
        None,
    )


def test_priority_off_refuses_no_unknown_class_and_applies_no_global_default():
    api = make_api(ON)
    api.create_object(priority_class("everyone", 50, global_default=True))
    with pytest.raises(errors.ForbiddenError, match="no PriorityClass with name nosuch was found"):
        api.create_object(pod("a", NS).priority_class("nosuch").build())
    assert spec_of(api, pod("b", NS).build()).priority_class_name == "everyone"

    api = make_api(off("Priority"))
    api.create_object(priority_class("everyone", 50, global_default=True))
    assert spec_of(api, pod("a", NS).priority_class("nosuch").build()).priority is None
    spec = spec_of(api, pod("b", NS).build())
    assert (spec.priority_class_name, spec.priority) == (None, None)


def test_priority_off_lets_a_client_set_the_priority_itself():
    # On: "the integer value of priority (5) must not be provided in pod spec ..."
    obj = pod("p", NS).priority(5).build()
    with pytest.raises(errors.ForbiddenError, match="must not be provided in pod spec"):
        make_api(ON).create_object(obj)
    assert spec_of(make_api(off("Priority")), obj).priority == 5


def test_priority_off_stops_refusing_a_second_global_default():
    api = make_api(off("Priority"))
    api.create_object(priority_class("a", 10, global_default=True))
    api.create_object(priority_class("b", 20, global_default=True))


# --- LimitRanger -----------------------------------------------------------------------------


def _limit_range() -> LimitRange:
    return from_dict(
        LimitRange,
        {
            "metadata": {"name": "lr", "namespace": NS},
            "spec": {
                "limits": [
                    {"type": "Container", "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "1"}}
                ]
            },
        },
    )


def test_limit_ranger_off_applies_no_defaults_and_no_bounds():
    api = make_api(ON)
    api.create_object(_limit_range())
    created = api.create_object(pod("p", NS).build()).obj
    assert created.spec.containers[0].resources.requests is not None
    assert "kubernetes.io/limit-ranger" in (created.metadata.annotations or {})
    with pytest.raises(errors.ForbiddenError, match="maximum cpu usage per Container is 1"):
        api.create_object(pod("big", NS).requests(cpu="2").limits(cpu="2").build())

    api = make_api(off("LimitRanger"))
    api.create_object(_limit_range())
    created = api.create_object(pod("p", NS).build()).obj
    # No defaults: only the empty struct upstream always serves.
    assert to_dict(created)["spec"]["containers"][0]["resources"] == {}
    assert not created.metadata.annotations
    api.create_object(pod("big", NS).requests(cpu="2").limits(cpu="2").build())


# --- ResourceQuota ---------------------------------------------------------------------------


def test_resource_quota_off_neither_refuses_nor_charges():
    api = make_api(ON)
    store_quota(api, quota("q", {"pods": "1"}))
    api.create_object(pod("p1", NS).build())
    with pytest.raises(errors.ForbiddenError, match="exceeded quota: q"):
        api.create_object(pod("p2", NS).build())

    api = make_api(off("ResourceQuota"))
    store_quota(api, quota("q", {"pods": "1"}))
    api.create_object(pod("p1", NS).build())
    api.create_object(pod("p2", NS).build())
    stored = api.get(ResourceQuota, "q", NS)
    # Only the quota controller (which runs whatever the plugins) would count them.
    assert {k: str(v) for k, v in (stored.status.used or {}).items()} == {"pods": "0"}


# --- kubeprio's own --------------------------------------------------------------------------


def _tenant() -> Tenant:
    return Tenant(
        metadata=ObjectMeta(name="t"),
        spec=TenantSpec(namespaces=(NS,), priority_classes=TenantPriorityClasses(allowed=("low",))),
    )


def test_tenant_priority_class_off_enforces_no_allowlist():
    obj = pod("p", NS).priority_class("high").build()
    api = make_api(ON)
    api.create_object(_tenant())
    with pytest.raises(errors.ForbiddenError, match='PriorityClass "high" is not allowed'):
        api.create_object(obj)
    api = make_api(off("TenantPriorityClass"))
    api.create_object(_tenant())
    assert spec_of(api, obj).priority == 1000


def test_system_priority_class_off_lets_any_user_name_a_system_class():
    obj = pod("p", NS).priority_class("system-node-critical").build()
    with pytest.raises(errors.ForbiddenError, match="reserved for cluster administrators"):
        make_api(ON).create_object(obj, user=ALICE)
    created = make_api(off("SystemPriorityClass")).create_object(obj, user=ALICE).obj
    assert created.spec.priority == 2000001000


# --- ServiceAccount (serve) ------------------------------------------------------------------


def test_service_account_off_gives_no_account_and_no_token_volume():
    account = ServiceAccount(metadata=ObjectMeta(name="default", namespace=NS))
    api = make_api(ON, serve=True)
    api.create_object(account)
    spec = to_dict(api.create_object(pod("p", NS).build()).obj)["spec"]
    assert spec["serviceAccountName"] == "default"
    assert spec["volumes"][0]["name"].startswith("kube-api-access-")

    api = make_api(off("ServiceAccount"), serve=True)  # no account in the namespace
    spec = to_dict(api.create_object(pod("p", NS).build()).obj)["spec"]
    assert "serviceAccountName" not in spec
    assert "volumes" not in spec


def test_plugins_kubeprio_does_not_implement_change_nothing():
    obj = pod("p", NS).priority_class("high").build()
    # Every one of them on (AlwaysDeny too would be accepted, and would deny nothing).
    everything = plugins.resolve(sorted(plugins.NOT_IMPLEMENTED))
    assert spec_of(make_api(everything), obj) == spec_of(make_api(ON), obj)


def test_namespace_auto_provision_admits_a_pod_with_the_default_account_to_come():
    """The namespace is made by the pod's own create, so its ``default`` account cannot
    exist yet; upstream's ServiceAccount plugin retries until the controller made it."""
    api = make_api(plugins.resolve(["NamespaceAutoProvision"]), serve=True)
    api.auto_create_namespaces = True  # what serve sets with the plugin on
    spec = to_dict(api.create_object(pod("p", "brand-new").build()).obj)["spec"]
    assert spec["serviceAccountName"] == "default"
    assert spec["volumes"][0]["name"].startswith("kube-api-access-")
    assert api.get(Namespace, "brand-new").metadata.name == "brand-new"
    # Without the plugin, a missing account is refused whatever the namespace.
    other = make_api(ON, serve=True)
    with pytest.raises(errors.ForbiddenError, match='serviceaccount "default" not found'):
        other.create_object(pod("p", NS).build())
