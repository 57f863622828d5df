"""ResourceQuota: the pod evaluator, validation, the admission plugin and the controller.

Upstream rules (kubernetes-semantics.md §7; ``pkg/quota/v1/evaluator/core/pods.go``,
``plugin/resourcequota/controller.go``, ``pkg/apis/core/validation``): a quota tracks a pod
when its ``status.hard`` names a pod resource and every scope matches; the PriorityClass
scope matches the class *name*; ``exceeded quota``/``must specify``/``insufficient quota``
texts are upstream's word for word.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.admission.defaults import default_chain
from kubeprio.admission.resourcequota import LimitedResource, limited_resources
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.quota import pod_matches_scope, pod_usage, quota_tracks_pod
from kubeprio.api.resourcequota import (
    ResourceQuota,
    ResourceQuotaSpec,
    ResourceQuotaStatus,
    ScopedResourceSelectorRequirement,
    ScopeSelector,
)
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.controllers.resourcequota import ResourceQuotaController
from kubeprio.store.memory import MemoryStore
from tests.builders import pod, priority_class
from tests.conftest import ManualClock


def _q(values: dict[str, str]) -> dict[str, Any]:
    return {name: parse_quantity(text) for name, text in values.items()}


def quota(
    name: str,
    hard: dict[str, str],
    *,
    namespace: str = "team-a",
    scopes: tuple[str, ...] | None = None,
    selector: list[tuple[str, str, tuple[str, ...]]] | None = None,
    used: dict[str, str] | None = None,
) -> ResourceQuota:
    expressions = tuple(
        ScopedResourceSelectorRequirement(scope_name=s, operator=o, values=v or None)
        for s, o, v in selector or ()
    )
    return ResourceQuota(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ResourceQuotaSpec(
            hard=_q(hard),
            scopes=scopes,
            scope_selector=ScopeSelector(match_expressions=expressions) if selector else None,
        ),
        # As the controller leaves it: every hard resource observed, at 0 unless given.
        status=ResourceQuotaStatus(hard=_q(hard), used=_q(used or dict.fromkeys(hard, "0"))),
    )


def requirement(scope: str, operator: str, *values: str) -> ScopedResourceSelectorRequirement:
    return ScopedResourceSelectorRequirement(
        scope_name=scope, operator=operator, values=values or None
    )


# --- the pod evaluator --------------------------------------------------------------------


def test_usage_counts_requests_limits_and_the_pod():
    # podComputeUsageHelper: cpu and requests.cpu from requests, limits.cpu from limits.
    p = pod("p", "team-a").requests(cpu="500m", memory="1Gi").limits(cpu="1").build()
    assert pod_usage(p) == _q(
        {
            "count/pods": "1",
            "pods": "1",
            "cpu": "500m",
            "requests.cpu": "500m",
            "limits.cpu": "1",
            "memory": "1Gi",
            "requests.memory": "1Gi",
        }
    )
    # QuotaV1Pod: a finished pod still counts as an object, not as compute.
    assert pod_usage(p, counts=False) == _q({"count/pods": "1"})


@pytest.mark.parametrize(
    ("class_name", "selector", "matches"),
    [
        ("high", requirement("PriorityClass", "In", "high", "mid"), True),
        ("low", requirement("PriorityClass", "In", "high"), False),
        ("", requirement("PriorityClass", "In", "high"), False),
        ("low", requirement("PriorityClass", "NotIn", "high"), True),
        ("high", requirement("PriorityClass", "NotIn", "high"), False),
        # A pod without a class is the empty label set: NotIn and DoesNotExist match it.
        ("", requirement("PriorityClass", "NotIn", "high"), True),
        ("", requirement("PriorityClass", "DoesNotExist"), True),
        ("high", requirement("PriorityClass", "DoesNotExist"), False),
        ("high", requirement("PriorityClass", "Exists"), True),
        ("", requirement("PriorityClass", "Exists"), False),
    ],
)
def test_the_priority_class_scope_matches_the_class_name(class_name, selector, matches):
    builder = pod("p", "team-a").requests(cpu="1")
    p = (builder.priority_class(class_name) if class_name else builder).build()
    assert pod_matches_scope(p, selector) is matches


def test_the_priority_class_scope_ignores_the_numeric_priority():
    # Two pods of the same priority value, different class names: only the name counts.
    q = quota("q", {"pods": "5"}, selector=[("PriorityClass", "In", ("high",))])
    named = pod("a", "team-a").priority_class("high").priority(100).build()
    other = pod("b", "team-a").priority_class("other").priority(100).build()
    assert quota_tracks_pod(q, named)
    assert not quota_tracks_pod(q, other)


def test_best_effort_and_terminating_scopes():
    best_effort = pod("a", "team-a").build()
    burstable = pod("b", "team-a").requests(cpu="1").build()
    exists = "Exists"
    assert pod_matches_scope(best_effort, requirement("BestEffort", exists))
    assert not pod_matches_scope(burstable, requirement("BestEffort", exists))
    assert pod_matches_scope(burstable, requirement("NotBestEffort", exists))
    deadline = evolve(burstable, spec=evolve(burstable.spec, active_deadline_seconds=60))
    assert pod_matches_scope(deadline, requirement("Terminating", exists))
    assert pod_matches_scope(burstable, requirement("NotTerminating", exists))


def test_a_quota_without_observed_limits_tracks_nothing():
    # generic.Matches reads status.hard: a quota the controller has not seen is ignored.
    q = evolve(quota("q", {"pods": "1"}), status=None)
    assert not quota_tracks_pod(q, pod("p", "team-a").build())


# --- admission ----------------------------------------------------------------------------


@pytest.fixture
def kapi() -> ApiService:
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(api.listers)
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    api.create_object(priority_class("high", 1000))
    return api


def store_quota(api: ApiService, q: ResourceQuota) -> ResourceQuota:
    created = api.create_object(evolve(q, status=None)).obj
    return api.update_status(evolve(created, status=q.status))


def used(api: ApiService, name: str) -> dict[str, str]:
    stored = api.get(ResourceQuota, name, "team-a")
    return {k: str(v) for k, v in (stored.status.used or {}).items()}


def test_a_pod_is_charged_and_the_one_beyond_the_limit_refused(kapi):
    store_quota(kapi, quota("compute", {"pods": "2", "requests.cpu": "1"}))
    kapi.create_object(pod("p1", "team-a").requests(cpu="500m").build())
    assert used(kapi, "compute") == {"pods": "1", "requests.cpu": "500m"}
    kapi.create_object(pod("p2", "team-a").requests(cpu="250m").build())
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(pod("p3", "team-a").requests(cpu="500m").build())
    assert raised.value.message == (
        'pods "p3" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, '
        "used: pods=2,requests.cpu=750m, limited: pods=2,requests.cpu=1"
    )
    assert used(kapi, "compute") == {"pods": "2", "requests.cpu": "750m"}
    assert len(kapi.list(Pod, namespace="team-a").items) == 2


def test_a_quota_on_cpu_requires_every_container_to_declare_it(kapi):
    store_quota(kapi, quota("compute", {"requests.cpu": "4", "limits.memory": "4Gi"}))
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(pod("p", "team-a").requests(cpu="1").build())
    container = pod("x").build().spec.containers[0].name
    assert raised.value.message == (
        f'pods "p" is forbidden: failed quota: compute: must specify limits.memory for: {container}'
    )


def test_a_scoped_quota_limits_only_its_class(kapi):
    store_quota(kapi, quota("high", {"pods": "1"}, selector=[("PriorityClass", "In", ("high",))]))
    kapi.create_object(pod("h1", "team-a").priority_class("high").build())
    with pytest.raises(errors.ForbiddenError, match="exceeded quota: high"):
        kapi.create_object(pod("h2", "team-a").priority_class("high").build())
    kapi.create_object(pod("plain", "team-a").build())  # no class: not tracked
    assert used(kapi, "high") == {"pods": "1"}


def test_an_unobserved_usage_is_status_unknown(kapi):
    q = quota("compute", {"pods": "2", "requests.cpu": "1"})
    store_quota(kapi, evolve(q, status=evolve(q.status, used=None)))
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(pod("p", "team-a").requests(cpu="1").build())
    assert raised.value.message == (
        'pods "p" is forbidden: status unknown for quota: compute, resources: pods,requests.cpu'
    )


def test_a_dry_run_is_checked_but_not_charged(kapi):
    store_quota(kapi, quota("compute", {"pods": "1"}))
    kapi.create_object(pod("p", "team-a").build(), dry_run=True)
    assert used(kapi, "compute") == {"pods": "0"}


def test_object_counts_of_other_kinds(kapi):
    store_quota(kapi, quota("counts", {"count/services": "0"}))
    service = from_dict_service("web")
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(service)
    assert raised.value.message == (
        'services "web" is forbidden: exceeded quota: counts, requested: count/services=1, '
        "used: count/services=0, limited: count/services=0"
    )


def from_dict_service(name: str) -> Any:
    from kubeprio.api.service import Service

    return from_dict(
        Service,
        {
            "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"ports": [{"port": 80}], "selector": {"app": name}},
        },
    )


LIMITED = limited_resources(
    {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "ResourceQuotaConfiguration",
        "limitedResources": [
            {
                "resource": "pods",
                "matchScopes": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
                ],
            },
            {"resource": "pods", "matchContains": ["nvidia.com/gpu"]},
        ],
    }
)


@pytest.fixture
def limited_api(kapi) -> ApiService:
    kapi.admission = default_chain(kapi.listers, LIMITED)
    return kapi


def test_a_limited_scope_needs_a_covering_quota(limited_api):
    # Upstream returns this refusal as a plain error: 500, no reason, the bare message.
    with pytest.raises(errors.StatusError) as raised:
        limited_api.create_object(pod("h", "team-a").priority_class("high").build())
    assert raised.value.status.code == 500
    assert raised.value.status.reason is None
    assert (
        raised.value.message
        == "insufficient quota to match these scopes: [{PriorityClass In [high]}]"
    )
    limited_api.create_object(pod("plain", "team-a").build())  # not in the limited scope
    # Coverage compares scope names only, and the covering quota needs no hard limit.
    store_quota(limited_api, quota("cover", {}, selector=[("PriorityClass", "Exists", ())]))
    limited_api.create_object(pod("h", "team-a").priority_class("high").build())


def test_a_limited_resource_needs_a_quota_that_tracks_it(limited_api):
    gpu = pod("g", "team-a").requests(**{"nvidia.com/gpu": "1"}).limits(**{"nvidia.com/gpu": "1"})
    with pytest.raises(errors.ForbiddenError) as raised:
        limited_api.create_object(gpu.build())
    assert raised.value.message == (
        'pods "g" is forbidden: insufficient quota to consume: requests.nvidia.com/gpu'
    )
    store_quota(limited_api, quota("gpus", {"requests.nvidia.com/gpu": "2"}))
    limited_api.create_object(gpu.build())
    assert used(limited_api, "gpus") == {"requests.nvidia.com/gpu": "1"}


def test_limited_resources_reject_an_entry_without_resource():
    with pytest.raises(ValueError, match=r"limitedResources\[0\].resource: Required value"):
        limited_resources({"kind": "ResourceQuotaConfiguration", "limitedResources": [{}]})
    assert LIMITED[0] == LimitedResource(
        resource="pods", match_scopes=(requirement("PriorityClass", "In", "high"),)
    )


@given(st.lists(st.sampled_from(["100m", "250m", "500m", "1"]), max_size=8))
def test_admission_never_lets_usage_exceed_the_limit(cpus):
    # The invariant quota exists for: admitted pods never sum above hard.
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(api.listers)
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    store_quota(api, quota("compute", {"requests.cpu": "1"}))
    admitted = 0
    for position, cpu in enumerate(cpus):
        try:
            api.create_object(pod(f"p{position}", "team-a").requests(cpu=cpu).build())
        except errors.ForbiddenError:
            continue
        admitted += parse_quantity(cpu).milli_value()
    assert admitted <= 1000
    assert parse_quantity(used(api, "compute").get("requests.cpu", "0")).milli_value() == admitted


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hard", "scopes", "selector", "message"),
    [
        ({"foo": "1"}, None, None, 'spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota'),
        ({"pods": "-1"}, None, None, 'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0'),
        ({"pods": "1500m"}, None, None, 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
        ({"pods": "1"}, ("Nope",), None, 'spec.scopes: Invalid value: []core.ResourceQuotaScope{"Nope"}: unsupported scope'),
        ({"ephemeral-storage": "1Gi"}, ("PriorityClass",), None, 'spec.scopes: Invalid value: []core.ResourceQuotaScope{"PriorityClass"}: unsupported scope applied to resource'),
        ({"pods": "1"}, ("BestEffort", "NotBestEffort"), None, 'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes'),
        ({"pods": "1"}, None, [("PriorityClass", "In", ())], "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"),
        ({"pods": "1"}, None, [("PriorityClass", "Exists", ("a",))], 'spec.scopeSelector.matchExpressions.values: Invalid value: []string{"a"}: must be no value when `operator` is \'Exist\' or \'DoesNotExist\' for scope selector'),
        ({"pods": "1"}, None, [("PriorityClass", "Gt", ("a",))], 'spec.scopeSelector.matchExpressions.operator: Invalid value: "Gt": not a valid selector operator'),
        ({"pods": "1"}, None, [("BestEffort", "In", ("a",))], "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"),
    ],
    ids=["not-quota", "negative", "fraction", "unknown-scope", "scope-resource", "conflict",
         "in-without-values", "exists-with-values", "bad-operator", "boolean-scope-operator"],
)  # fmt: skip
def test_validation_messages(kapi, hard, scopes, selector, message):
    bad = evolve(quota("bad", hard, scopes=scopes, selector=selector), status=None)
    with pytest.raises(errors.InvalidError) as raised:
        kapi.create_object(bad)
    assert message in raised.value.message
    assert kapi.list(ResourceQuota, namespace="team-a").items == []


def test_scopes_are_immutable_but_limits_are_not(kapi):
    created = kapi.create_object(
        evolve(quota("q", {"pods": "1"}, scopes=("NotTerminating",)), status=None)
    ).obj
    kapi.update(evolve(created, spec=evolve(created.spec, hard=_q({"pods": "3"}))))
    current = kapi.get(ResourceQuota, "q", "team-a")
    with pytest.raises(
        errors.InvalidError,
        match=r'spec.scopes: Invalid value: \[\]core.ResourceQuotaScope\{"Terminating"\}: field is immutable',
    ):
        kapi.update(evolve(current, spec=evolve(current.spec, scopes=("Terminating",))))


# --- the controller -----------------------------------------------------------------------


def test_the_controller_fills_the_status_and_replenishes_on_delete(kapi):
    clock = kapi.clock
    pods: Informer[Pod] = Informer(kapi, Pod)
    quotas: Informer[ResourceQuota] = Informer(kapi, ResourceQuota)
    controller = ResourceQuotaController(
        kapi, clock=clock, rng=random.Random(0), pods=pods, quotas=quotas
    )
    pods.start()
    quotas.start()
    kapi.create_object(pod("before", "team-a").requests(cpu="200m").build())
    kapi.create_object(pod("finished", "team-a").requests(cpu="1").build())
    finished = kapi.get(Pod, "finished", "team-a")
    kapi.update_status(evolve(finished, status=evolve(finished.status, phase="Succeeded")))
    kapi.create_object(
        ResourceQuota(
            metadata=ObjectMeta(name="q", namespace="team-a"),
            spec=ResourceQuotaSpec(hard=_q({"pods": "5", "requests.cpu": "2", "count/pods": "9"})),
        )
    )

    def settle() -> None:
        for _ in range(5):
            pods.pump()
            quotas.pump()
            controller.run_once()

    settle()
    stored = kapi.get(ResourceQuota, "q", "team-a")
    assert {k: str(v) for k, v in stored.status.hard.items()} == {
        "count/pods": "9", "pods": "5", "requests.cpu": "2"
    }  # fmt: skip
    # The finished pod is an object (count/pods) but no longer compute.
    assert used(kapi, "q") == {"count/pods": "2", "pods": "1", "requests.cpu": "200m"}
    kapi.delete(Pod, "before", "team-a", options=DeleteRequest(grace_period_seconds=0))
    settle()
    assert used(kapi, "q") == {"count/pods": "1", "pods": "0", "requests.cpu": "0"}
