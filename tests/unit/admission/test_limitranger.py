"""The LimitRanger admission plugin, through the API server's write path.

Upstream: ``plugin/pkg/admission/limitranger/admission.go`` (v1.32) and its
``admission_test.go`` (``TestPodLimitFunc``, ``TestDefaultContainerResourceRequirements``,
``TestMergePodResourceRequirements``, ``TestLimitRangerIgnoresSubresource``...): defaults are
written into containers and init containers that lack them, with the
``kubernetes.io/limit-ranger`` annotation; min/max/ratio are checked per Container and per
Pod (the pod's containers summed, init containers at most), every violation joined in one
403 as ``utilerrors.NewAggregate`` joins them; pod updates are left alone.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.defaults import default_chain
from kubeprio.admission.limitranger import ANNOTATION, LimitRangerPlugin
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.quota import pod_amounts
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import admission_request, stored_listers
from tests.conftest import ManualClock

NS = "team-a"


def make_api() -> ApiService:
    store = MemoryStore()
    api = ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(0),
        admission=default_chain(StoreListers(store)),
    )
    api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
    return api


def limit_range(*items: dict[str, Any], name: str = "lr") -> LimitRange:
    return from_dict(
        LimitRange, {"metadata": {"name": name, "namespace": NS}, "spec": {"limits": list(items)}}
    )


def container(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
              **extra: Any) -> dict[str, Any]:  # fmt: skip
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources, **extra}


def make_pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (),
             name: str = "p", **metadata: Any) -> Pod:  # fmt: skip
    spec: dict[str, Any] = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return from_dict(Pod, {"metadata": {"name": name, "namespace": NS, **metadata}, "spec": spec})


def resources_of(pod: Pod, index: int = 0, *, init: bool = False) -> dict[str, Any]:
    key = "initContainers" if init else "containers"
    return to_dict(pod)["spec"][key][index]["resources"]


DEFAULTS = {
    "type": "Container",
    "default": {"cpu": "500m", "memory": "512Mi"},
    "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
}


# --- defaults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected", "annotation"),
    [
        (
            container("nginx"),
            {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit "
            "for container nginx",
        ),
        (
            # Pod defaulting already requested the limit: only memory is filled in.
            container("nginx", limits={"cpu": "2"}),
            {"limits": {"cpu": "2", "memory": "512Mi"}, "requests": {"cpu": "2", "memory": "128Mi"}},
            "LimitRanger plugin set: memory request for container nginx; memory limit for "
            "container nginx",
        ),
        (
            container("nginx", requests={"cpu": "200m", "memory": "256Mi"}),
            {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "200m", "memory": "256Mi"}},
            "LimitRanger plugin set: cpu, memory limit for container nginx",
        ),
        (
            container("nginx", requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}),
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            None,
        ),
    ],
    ids=["nothing-set", "limit-only", "requests-only", "all-set"],
)  # fmt: skip
def test_containers_get_the_defaults_they_lack(given, expected, annotation):
    api = make_api()
    api.create_object(limit_range(DEFAULTS))
    stored = api.create_object(make_pod(given)).obj
    assert resources_of(stored) == expected
    assert stored.metadata.annotation(ANNOTATION) == annotation


def test_init_containers_are_defaulted_and_named_after_the_containers():
    api = make_api()
    api.create_object(limit_range({"type": "Container", "defaultRequest": {"cpu": "100m"}}))
    pod = make_pod(container("app"), container("side", requests={"cpu": "1"}),
                   init=(container("setup"),))  # fmt: skip
    stored = api.create_object(pod).obj
    assert resources_of(stored, 0, init=True) == {"requests": {"cpu": "100m"}}
    assert stored.metadata.annotation(ANNOTATION) == (
        "LimitRanger plugin set: cpu request for container app; cpu request for init container "
        "setup"
    )
    # A defaulted pod is Burstable from the start (its QoS class is computed after admission).
    assert stored.status is not None
    assert stored.status.qos_class == "Burstable"


def test_a_second_limit_range_fills_only_what_is_left_and_replaces_the_annotation():
    api = make_api()
    api.create_object(
        limit_range({"type": "Container", "defaultRequest": {"cpu": "100m"}}, name="a")
    )
    api.create_object(
        limit_range({"type": "Container", "defaultRequest": {"cpu": "300m", "memory": "64Mi"}}, name="b")
    )  # fmt: skip
    stored = api.create_object(make_pod(container("app"))).obj
    # LimitRanges are applied by name: "a" sets cpu, "b" only memory.
    assert resources_of(stored) == {"requests": {"cpu": "100m", "memory": "64Mi"}}
    assert stored.metadata.annotation(ANNOTATION) == (
        "LimitRanger plugin set: memory request for container app"
    )


def test_other_annotations_are_kept():
    api = make_api()
    api.create_object(limit_range(DEFAULTS))
    stored = api.create_object(make_pod(container("a"), annotations={"team": "x"})).obj
    assert stored.metadata.annotations is not None
    assert stored.metadata.annotations["team"] == "x"


# --- bounds ---------------------------------------------------------------------------------

CONTAINER_BOUNDS = {
    "type": "Container",
    "min": {"cpu": "100m", "memory": "64Mi"},
    "max": {"cpu": "1", "memory": "1Gi"},
    "maxLimitRequestRatio": {"cpu": "4"},
}


@pytest.mark.parametrize(
    ("item", "given", "message"),
    [
        ({"type": "Pod", "min": {"cpu": "100m"}}, container("c"),
         "minimum cpu usage per Pod is 100m.  No request is specified"),
        ({"type": "Container", "min": {"cpu": "100m"}}, container("c", requests={"cpu": "50m"}),
         "minimum cpu usage per Container is 100m, but request is 50m"),
        ({"type": "Container", "min": {"memory": "64Mi"}},
         container("c", requests={"memory": "64Mi"}, limits={"memory": "32Mi"}),
         None),  # request above limit: pod validation (422) answers first
        ({"type": "Pod", "max": {"cpu": "1"}}, container("c", requests={"cpu": "1"}),
         "maximum cpu usage per Pod is 1.  No limit is specified"),
        ({"type": "Container", "max": {"memory": "1Gi"}}, container("c", limits={"memory": "2Gi"}),
         "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
        ({"type": "Pod", "maxLimitRequestRatio": {"cpu": "2"}}, container("c", limits={"cpu": "1"}, requests={"cpu": "0"}),
         "cpu max limit to request ratio per Pod is 2, but no request is specified or request is 0"),
        ({"type": "Pod", "maxLimitRequestRatio": {"cpu": "2"}}, container("c", requests={"cpu": "1"}),
         "cpu max limit to request ratio per Pod is 2, but no limit is specified or limit is 0"),
        ({"type": "Container", "maxLimitRequestRatio": {"cpu": "1500m"}},
         container("c", requests={"cpu": "300m"}, limits={"cpu": "1"}),
         "cpu max limit to request ratio per Container is 1500m, but provided ratio is 3.333333"),
    ],
    ids=["min-no-request", "min-request", "min-limit-after-validation", "max-no-limit",
         "max-limit", "ratio-request-0", "ratio-no-limit", "ratio-exceeded"],
)  # fmt: skip
def test_each_bound_refuses_with_upstreams_text(item, given, message):
    api = make_api()
    api.create_object(limit_range(item))
    if message is None:
        with pytest.raises(errors.InvalidError):
            api.create_object(make_pod(given, name="x"))
        return
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(make_pod(given, name="x"))
    assert caught.value.message == f'pods "x" is forbidden: {message}'
    assert caught.value.status.code == 403


def test_every_violation_is_joined_in_one_message():
    api = make_api()
    api.create_object(limit_range(CONTAINER_BOUNDS))
    pod = make_pod(container("app", requests={"cpu": "50m", "memory": "64Mi"},
                             limits={"cpu": "1", "memory": "2Gi"}), name="x")  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(pod)
    assert caught.value.message == (
        'pods "x" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request "
        "ratio per Container is 4, but provided ratio is 20.000000]"
    )


def test_the_same_violation_of_two_containers_is_reported_once():
    # NewAggregate's Error() skips messages it has already printed.
    api = make_api()
    api.create_object(limit_range({"type": "Container", "max": {"cpu": "1"}}))
    big = {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}
    pod = make_pod(container("a", **big), container("b", **big), name="x")
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(pod)
    assert caught.value.message == (
        'pods "x" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )


def test_init_containers_are_bounded_like_containers():
    api = make_api()
    api.create_object(limit_range({"type": "Container", "max": {"memory": "1Gi"}}))
    pod = make_pod(container("app", limits={"memory": "1Gi"}),
                   init=(container("setup", limits={"memory": "4Gi"}),), name="x")  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(pod)
    assert caught.value.message == (
        'pods "x" is forbidden: maximum memory usage per Container is 1Gi, but limit is 4Gi'
    )


def test_pod_limits_sum_the_containers():
    api = make_api()
    api.create_object(limit_range({"type": "Pod", "max": {"cpu": "2"}}))
    one = {"limits": {"cpu": "1500m"}}
    api.create_object(make_pod(container("a", **one), name="fits"))
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(make_pod(container("a", **one), container("b", **one), name="x"))
    assert caught.value.message == (
        'pods "x" is forbidden: maximum cpu usage per Pod is 2, but limit is 3'
    )


@pytest.mark.parametrize(
    ("containers", "init", "expected"),
    [
        # Regular init containers run alone: the pod needs the larger of them and the sum.
        ([{"cpu": "1"}, {"cpu": "1"}], [({"cpu": "3"}, False)], "3"),
        ([{"cpu": "1"}, {"cpu": "1"}], [({"cpu": "1"}, False)], "2"),
        # A sidecar runs beside everything after it and the containers.
        ([{"cpu": "1"}], [({"cpu": "500m"}, True), ({"cpu": "2"}, False)], "2500m"),
        ([{"cpu": "1"}], [({"cpu": "500m"}, True)], "1500m"),
    ],
    ids=["init-larger", "sum-larger", "sidecar-then-init", "sidecar-added"],
)
def test_pod_requests_follow_init_containers_and_sidecars(containers, init, expected):
    spec = make_pod(
        *(container(f"c{i}", requests=r) for i, r in enumerate(containers)),
        init=tuple(
            container(f"i{i}", requests=r, **({"restartPolicy": "Always"} if sidecar else {}))
            for i, (r, sidecar) in enumerate(init)
        ),
    ).spec
    assert spec is not None
    assert pod_amounts(spec, limits=False, overhead=False) == {"cpu": parse_quantity(expected)}


def test_a_generated_name_is_named_in_the_refusal():
    # Validating admission runs after the name is generated (AdmissionToValidateObjectFunc).
    api = make_api()
    api.create_object(limit_range({"type": "Container", "max": {"cpu": "1"}}))
    pod = make_pod(container("a", limits={"cpu": "2"}), name="")
    pod = evolve(pod, metadata=evolve(pod.metadata, name=None, generate_name="web-"))
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(pod)
    assert caught.value.message.startswith('pods "web-')
    assert caught.value.message.endswith(
        '" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )


def test_a_defaulted_pod_is_checked_against_the_range_that_defaulted_it():
    api = make_api()
    # A default limit above another item's ratio: the defaulted pod is refused.
    api.create_object(limit_range({"type": "Container", "default": {"cpu": "1"},
                                   "defaultRequest": {"cpu": "100m"},
                                   "maxLimitRequestRatio": {"cpu": "5"}}))  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(make_pod(container("a"), name="x"))
    assert caught.value.message == (
        'pods "x" is forbidden: cpu max limit to request ratio per Container is 5, but '
        "provided ratio is 10.000000"
    )


# --- what the plugin leaves alone -----------------------------------------------------------


def test_pod_updates_subresources_and_other_kinds_are_ignored():
    lr = limit_range({"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "100m"}})
    _, listers = stored_listers(lr)
    plugin = LimitRangerPlugin(listers)
    old = make_pod(container("a"))
    too_big = make_pod(container("a", limits={"cpu": "4"}))
    outcome = AdmissionOutcome()
    for request in (
        admission_request(too_big, operation="UPDATE", old=old),
        admission_request(too_big, subresource="status"),
    ):
        assert plugin.admit(request, outcome) is request.obj
        plugin.validate(request, outcome)
    quota = ResourceQuota(metadata=ObjectMeta(name="q", namespace=NS))
    assert plugin.admit(admission_request(quota), outcome) is quota


def test_limit_ranger_runs_first_in_both_phases():
    # AllOrderedPlugins: LimitRanger right after the namespace plugins, before ServiceAccount.
    store = MemoryStore()
    chain = default_chain(StoreListers(store), service_account_rng=random.Random(0))
    assert [p.name for p in chain.mutating][:2] == ["LimitRanger", "ServiceAccount"]
    assert [p.name for p in chain.validating][:2] == ["LimitRanger", "ServiceAccount"]
    assert chain.validating[-1].name == "ResourceQuota"


@pytest.mark.parametrize(
    ("messages", "text"),
    [(["a"], "a"), (["a", "b"], "[a, b]"), (["a", "a"], "a"), (["a", "b", "a"], "[a, b]")],
    ids=["one", "two", "same-twice", "duplicate-dropped"],
)
def test_aggregate_joins_as_upstream(messages, text):
    assert errors.aggregate_text(messages) == text


# --- ResourceQuota sees the defaults --------------------------------------------------------


def test_quota_counts_and_accepts_the_defaulted_requests():
    api = make_api()
    api.create_object(limit_range(DEFAULTS))
    quota = from_dict(ResourceQuota, {
        "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"requests.cpu": "150m", "limits.memory": "1Gi"}},
    })  # fmt: skip
    stored = api.create_object(quota).obj
    # As the quota controller leaves a fresh quota: observed, nothing used.
    hard = stored.spec.hard
    api.update_status(evolve(stored, status=evolve(stored.status, hard=hard,
                                                   used=dict.fromkeys(hard, parse_quantity("0")))))  # fmt: skip
    # Without the defaults the quota would refuse: "must specify requests.cpu,limits.memory".
    api.create_object(make_pod(container("a"), name="one"))
    used = api.get(ResourceQuota, "q", NS).status.used
    assert used == {
        "requests.cpu": parse_quantity("100m"),
        "limits.memory": parse_quantity("512Mi"),
    }
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(make_pod(container("a"), name="two"))
    assert caught.value.message == (
        'pods "two" is forbidden: exceeded quota: q, requested: requests.cpu=100m, used: '
        "requests.cpu=100m, limited: requests.cpu=150m"
    )


# --- property -------------------------------------------------------------------------------

MILLI = st.integers(min_value=1, max_value=4000)


@settings(max_examples=60, deadline=None)
@given(
    bounds=st.lists(MILLI, min_size=4, max_size=4).map(sorted),
    set_request=st.booleans(),
    set_limit=st.booleans(),
)
def test_a_defaulted_pod_within_the_bounds_is_admitted_with_requests_at_most_limits(
    bounds, set_request, set_limit
):
    """Whatever a valid range's min <= defaultRequest <= default <= max, a container that sets
    nothing, or only a value inside [min, max], is admitted and ends with request <= limit."""
    low, request, limit, high = (f"{v}m" for v in bounds)
    api = make_api()
    api.create_object(limit_range({"type": "Container", "min": {"cpu": low}, "max": {"cpu": high},
                                   "default": {"cpu": limit}, "defaultRequest": {"cpu": request}}))  # fmt: skip
    given_requests = {"cpu": request} if set_request else None
    given_limits = {"cpu": limit} if set_limit else None
    stored = api.create_object(make_pod(container("a", given_requests, given_limits))).obj
    resources = stored.spec.containers[0].resources
    assert resources.requests["cpu"] <= resources.limits["cpu"]
    assert parse_quantity(low) <= resources.requests["cpu"]
    assert resources.limits["cpu"] <= parse_quantity(high)
