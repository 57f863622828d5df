"""The RuntimeClass admission plugin, through the API server's write path.

Upstream: v1.32 ``plugin/pkg/admission/runtimeclass/admission.go`` (``Admit``:
``setOverhead`` and ``setScheduling``; ``Validate``: ``validateOverhead``; pods on CREATE
only, subresources ignored) and its ``admission_test.go`` (``TestSetOverhead``,
``TestSetScheduling``, ``TestValidate``), and ``pkg/util/tolerations``
(``MergeTolerations``/``isSuperset``, ``tolerations_test.go``'s ``TestMergeTolerations``).
Errors are ``admission.NewForbidden``: ``pods "<name>" is forbidden: <text>``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.admission import plugins
from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.defaults import default_chain
from kubeprio.admission.runtimeclass import (
    RuntimeClassPlugin,
    merge_tolerations,
    tolerates_superset,
)
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod, Toleration
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.quota import pod_amounts
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaStatus
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import admission_request, stored_listers
from tests.conftest import ManualClock

NS = "team-a"


def make_api(**flags: Any) -> ApiService:
    store = MemoryStore()
    api = ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(0),
        admission=default_chain(StoreListers(store), **flags),
    )
    api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
    return api


def runtime_class(name: str = "gvisor", **fields: Any) -> RuntimeClass:
    return from_dict(RuntimeClass, {"metadata": {"name": name}, "handler": "runsc", **fields})


def make_pod(name: str = "p", **spec: Any) -> Pod:
    body = {"containers": [{"name": "app", "image": "nginx"}], **spec}
    return from_dict(Pod, {"metadata": {"name": name, "namespace": NS}, "spec": body})


def spec_of(pod: Pod) -> dict[str, Any]:
    return to_dict(pod)["spec"]


def forbidden(api: ApiService, pod: Pod) -> str:
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(pod)
    return caught.value.message


OVERHEAD = {"overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}}
SCHEDULING = {
    "scheduling": {
        "nodeSelector": {"sandbox": "gvisor"},
        "tolerations": [{"key": "sandbox", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"}],
    }
}  # fmt: skip


# --- overhead (setOverhead, validateOverhead) ---------------------------------------------------


def test_the_class_overhead_is_set_on_the_pod_and_counted_in_its_requests():
    api = make_api()
    api.create_object(runtime_class(**OVERHEAD))
    stored = api.create_object(make_pod(runtimeClassName="gvisor")).obj
    assert spec_of(stored)["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert {k: str(v) for k, v in pod_amounts(stored.spec, limits=False).items()} == {
        "cpu": "250m",
        "memory": "120Mi",
    }


@pytest.mark.parametrize(
    ("pod_overhead", "class_fields", "message"),
    [
        # setOverhead: a different overhead already on the pod.
        ({"cpu": "1"}, OVERHEAD, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
        # validateOverhead: the class defines none, the pod carries one.
        ({"cpu": "1"}, {}, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    ],
    ids=["differs", "class-has-none"],
)  # fmt: skip
def test_a_pod_overhead_the_class_does_not_define_is_refused(pod_overhead, class_fields, message):
    api = make_api()
    api.create_object(runtime_class(**class_fields))
    pod = make_pod(runtimeClassName="gvisor", overhead=pod_overhead)
    assert forbidden(api, pod) == f'pods "p" is forbidden: {message}'
    assert api.list(Pod, NS).items == []


def test_an_overhead_without_a_runtime_class_is_refused():
    api = make_api()
    assert forbidden(api, make_pod(overhead={"cpu": "100m"})) == (
        'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding '
        "RuntimeClass defined Overhead"
    )


def test_an_equal_overhead_in_other_units_is_accepted():
    """``apiequality.Semantic.DeepEqual`` compares quantities by value."""
    api = make_api()
    api.create_object(runtime_class(**OVERHEAD))
    pod = make_pod(runtimeClassName="gvisor", overhead={"cpu": "0.25", "memory": "125829120"})
    stored = api.create_object(pod).obj
    assert stored.spec.overhead == runtime_class(**OVERHEAD).overhead.pod_fixed


def test_an_unknown_runtime_class_is_refused_and_nothing_is_stored():
    api = make_api()
    assert forbidden(api, make_pod(runtimeClassName="kata")) == (
        'pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found'
    )
    assert api.list(Pod, NS).items == []


def test_a_generated_name_is_what_the_error_names():
    api = make_api()
    pod = from_dict(
        Pod,
        {
            "metadata": {"generateName": "web-", "namespace": NS},
            "spec": {"runtimeClassName": "kata", "containers": [{"name": "a", "image": "x"}]},
        },
    )
    assert (
        forbidden(api, pod)
        == 'pods "web-" is forbidden: pod rejected: RuntimeClass "kata" not found'
    )


def test_a_class_without_overhead_or_scheduling_leaves_the_pod_as_it_is():
    api = make_api()
    api.create_object(runtime_class())
    stored = api.create_object(make_pod(runtimeClassName="gvisor", nodeSelector={"a": "b"})).obj
    assert "overhead" not in spec_of(stored)
    assert spec_of(stored)["nodeSelector"] == {"a": "b"}
    assert spec_of(stored)["runtimeClassName"] == "gvisor"


# --- scheduling (setScheduling) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod_selector", "expected"),
    [
        (None, {"sandbox": "gvisor"}),
        ({"zone": "a"}, {"sandbox": "gvisor", "zone": "a"}),
        ({"sandbox": "gvisor"}, {"sandbox": "gvisor"}),
    ],
    ids=["pod-has-none", "disjoint", "same-value"],
)
def test_the_class_node_selector_is_merged_into_the_pod(pod_selector, expected):
    api = make_api()
    api.create_object(runtime_class(**SCHEDULING))
    spec: dict[str, Any] = {"runtimeClassName": "gvisor"}
    if pod_selector is not None:
        spec["nodeSelector"] = pod_selector
    stored = api.create_object(make_pod(**spec)).obj
    assert spec_of(stored)["nodeSelector"] == expected


def test_a_conflicting_node_selector_is_refused_with_both_values():
    api = make_api()
    api.create_object(runtime_class(**SCHEDULING))
    pod = make_pod(runtimeClassName="gvisor", nodeSelector={"sandbox": "kata"})
    assert forbidden(api, pod) == (
        'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; '
        "pod.spec.nodeSelector[sandbox] = kata"
    )


def test_the_class_tolerations_follow_the_pods_own_and_the_defaulted_ones():
    """RuntimeClass runs after DefaultTolerationSeconds (AllOrderedPlugins), so the pod's
    list is its own, then the two 300-second ones, then the class's."""
    api = make_api()
    api.create_object(runtime_class(**SCHEDULING))
    own = {"key": "team", "operator": "Exists"}
    stored = api.create_object(make_pod(runtimeClassName="gvisor", tolerations=[own])).obj
    assert spec_of(stored)["tolerations"] == [
        own,
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "sandbox", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"},
    ]  # fmt: skip


# --- when the plugin acts -----------------------------------------------------------------------


def test_updates_and_subresources_are_ignored():
    _store, listers = stored_listers()
    plugin = RuntimeClassPlugin(listers)
    pod = make_pod(runtimeClassName="missing", overhead={"cpu": "1"})
    for request in (
        admission_request(pod, operation="UPDATE", old=pod),
        admission_request(pod, subresource="status"),
    ):
        assert plugin.admit(request, AdmissionOutcome()) is pod
        plugin.validate(request, AdmissionOutcome())


def test_disabling_the_plugin_admits_an_unknown_class_unchanged():
    api = make_api(enabled=plugins.resolve(disable=["RuntimeClass"]))
    api.create_object(runtime_class(**OVERHEAD))
    stored = api.create_object(make_pod(runtimeClassName="gvisor")).obj
    assert "overhead" not in spec_of(stored)
    api.create_object(make_pod("q", runtimeClassName="kata"))


def test_quota_charges_the_overhead_the_plugin_set():
    """ResourceQuota runs after RuntimeClass: ``PodRequests`` adds the overhead to the
    requests, ``PodLimits`` only to the limits the containers set (none here)."""
    api = make_api()
    api.create_object(runtime_class(**OVERHEAD))
    quota = from_dict(
        ResourceQuota,
        {
            "metadata": {"name": "q", "namespace": NS},
            "spec": {"hard": {"requests.cpu": "1", "limits.memory": "1Gi"}},
        },
    )
    created = api.create_object(quota).obj
    zero = {name: parse_quantity("0") for name in created.spec.hard}
    api.update_status(
        evolve(created, status=ResourceQuotaStatus(hard=created.spec.hard, used=zero))
    )
    pod = from_dict(
        Pod,
        {
            "metadata": {"name": "p", "namespace": NS},
            "spec": {
                "runtimeClassName": "gvisor",
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx",
                        "resources": {"requests": {"cpu": "800m"}, "limits": {"memory": "100Mi"}},
                    }
                ],
            },
        },
    )
    assert forbidden(api, pod) == (
        'pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=1050m, '
        "used: requests.cpu=0, limited: requests.cpu=1"
    )


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({}, {}),
        ({"memory": "100Mi"}, {"memory": "220Mi"}),
        ({"cpu": "0", "memory": "100Mi"}, {"cpu": "0", "memory": "220Mi"}),
    ],
    ids=["no-limits", "memory-limit", "zero-cpu-limit"],
)
def test_quota_limits_take_the_overhead_only_where_a_limit_is_set(limits, expected):
    """component-helpers ``PodLimits``: "Add overhead to non-zero limits"; requests
    (``PodRequests``) take all of it."""
    pod = make_pod(
        overhead={"cpu": "250m", "memory": "120Mi"},
        containers=[{"name": "a", "image": "x", "resources": {"limits": limits}}],
    )
    assert {k: str(v) for k, v in pod_amounts(pod.spec, limits=True).items()} == expected
    assert {k: str(v) for k, v in pod_amounts(pod.spec, limits=False).items()} == {
        "cpu": "250m",
        "memory": "120Mi",
    }


# --- MergeTolerations ---------------------------------------------------------------------------


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "",
        seconds: int | None = None) -> Toleration:  # fmt: skip
    return Toleration(
        key=key or None, operator=operator or None, value=value or None, effect=effect or None,
        toleration_seconds=seconds,
    )  # fmt: skip


# Cases of upstream's TestMergeTolerations / TestIsSuperset (pkg/util/tolerations).
ALL = tol(operator="Exists")
FOO_EXISTS = tol("foo", "Exists")
FOO_BAR_NOSCHEDULE = tol("foo", "Equal", "bar", "NoSchedule")
FOO_BAR_ANY_EFFECT = tol("foo", "Equal", "bar")
FOO_NOEXECUTE_300 = tol("foo", "Exists", effect="NoExecute", seconds=300)
FOO_NOEXECUTE_100 = tol("foo", "Exists", effect="NoExecute", seconds=100)
FOO_NOEXECUTE_FOREVER = tol("foo", "Exists", effect="NoExecute")


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ((), (), None),
        ((FOO_BAR_NOSCHEDULE,), (), (FOO_BAR_NOSCHEDULE,)),
        ((FOO_BAR_NOSCHEDULE,), (FOO_BAR_NOSCHEDULE,), (FOO_BAR_NOSCHEDULE,)),
        ((FOO_BAR_NOSCHEDULE,), (FOO_BAR_ANY_EFFECT,), (FOO_BAR_ANY_EFFECT,)),
        ((FOO_BAR_NOSCHEDULE, FOO_EXISTS), (), (FOO_EXISTS,)),
        ((FOO_BAR_NOSCHEDULE,), (ALL,), (ALL,)),
        ((FOO_NOEXECUTE_100,), (FOO_NOEXECUTE_300,), (FOO_NOEXECUTE_300,)),
        ((FOO_NOEXECUTE_FOREVER,), (FOO_NOEXECUTE_300,), (FOO_NOEXECUTE_FOREVER,)),
        ((FOO_BAR_NOSCHEDULE,), (tol("baz", "Exists"),), (FOO_BAR_NOSCHEDULE, tol("baz", "Exists"))),
    ],
    ids=["empty", "one", "equal-once", "wider-effect", "exists-covers-equal", "match-all",
         "longer-seconds", "forever-covers-seconds", "disjoint"],
)  # fmt: skip
def test_merge_keeps_only_the_widest_tolerations(first, second, expected):
    assert merge_tolerations(first, second) == expected


def test_a_bounded_noexecute_toleration_does_not_cover_an_unbounded_one():
    assert not tolerates_superset(FOO_NOEXECUTE_300, FOO_NOEXECUTE_FOREVER)
    assert tolerates_superset(FOO_NOEXECUTE_FOREVER, FOO_NOEXECUTE_300)


KEYS = st.sampled_from(["", "foo", "bar"])
TOLERATIONS = st.builds(
    tol,
    key=KEYS,
    operator=st.sampled_from(["", "Equal", "Exists"]),
    value=st.sampled_from(["", "x"]),
    effect=st.sampled_from(["", "NoSchedule", "NoExecute"]),
    seconds=st.sampled_from([None, 60, 300]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOLERATIONS, max_size=4), st.lists(TOLERATIONS, max_size=4))
def test_every_input_toleration_is_kept_or_covered_by_a_kept_one(first, second):
    merged = merge_tolerations(first, second) or ()
    assert all(t in (*first, *second) for t in merged)
    for toleration in (*first, *second):
        assert any(tolerates_superset(kept, toleration) for kept in merged)


def test_the_plugin_is_idempotent_on_an_admitted_pod():
    """Admitting an admitted pod again changes nothing (its overhead now matches)."""
    _store, listers = stored_listers(runtime_class(**OVERHEAD, **SCHEDULING))
    plugin = RuntimeClassPlugin(listers)
    pod = make_pod(runtimeClassName="gvisor")
    once = plugin.admit(admission_request(pod), AdmissionOutcome())
    assert isinstance(once, Pod)
    twice = plugin.admit(admission_request(once), AdmissionOutcome())
    assert twice == once
    plugin.validate(admission_request(once), AdmissionOutcome())
    assert evolve(once, spec=evolve(once.spec, overhead=None)) != once
