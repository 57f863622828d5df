"""PodTopologySpread's default selector: upstream ``helper.DefaultSelector`` and
``helper.GetPodServices`` (``pkg/scheduler/framework/plugins/helper/spread.go``, v1.32)
and the listers ``scheduler.spreadlisters`` gives them (upstream's ``setListers``).

A pod's selector for the system default constraints merges the selectors of the Services
selecting it into one label set, then adds its controller's: a ReplicationController's
map merged into the set, a ReplicaSet's or StatefulSet's requirements added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kubeprio.api import selectors
from kubeprio.api.apps import ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.replicationcontroller import ReplicationController, ReplicationControllerSpec
from kubeprio.api.service import Service, ServicePort, ServiceSpec
from kubeprio.api.statefulset import StatefulSet, StatefulSetSpec
from kubeprio.apiserver.service import ApiService
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.podtopologyspread import (
    PodTopologySpread,
    PodTopologySpreadArgs,
    default_selector,
)
from kubeprio.scheduler.spreadlisters import SpreadListers
from tests.builders import label_selector, pod, pod_template
from tests.unit.scheduler.plugins.harness import lister, node_infos, run_scores

OWNERS: dict[tuple[str, str], LabelSelector] = {
    ("ReplicationController", "rc"): LabelSelector(match_labels={"tier": "web"}),
    ("ReplicaSet", "rs"): label_selector({"tier": "web"}, ("track", "In", ("stable", "canary"))),
    ("StatefulSet", "ss"): label_selector(None, ("tier", "Exists", ())),
    ("ReplicaSet", "bad"): label_selector(None, ("tier", "Bogus", ())),
    ("ReplicaSet", "everything"): LabelSelector(),
}


def owner_lookup(api_version: str, kind: str, namespace: str, name: str) -> LabelSelector | None:
    return OWNERS.get((kind, name))


def services_lookup(*found: Mapping[str, str]) -> Any:
    def lookup(namespace: str, labels: Mapping[str, str]) -> Sequence[Mapping[str, str]]:
        assert namespace == "default"
        return list(found)

    return lookup


WEB = pod("p").label("app", "web").label("tier", "web").label("track", "stable")

CASES = [
    ("no Service, no owner: everything", WEB.build(), (), "", True),
    ("Services' selectors merged", WEB.build(), ({"app": "web"}, {"tier": "web"}), "app=web,tier=web", False),
    (
        "an RC's map joins the Services' label set",
        WEB.owner("ReplicationController", "rc", "v1").build(),
        ({"app": "web"},),
        "app=web,tier=web",
        False,
    ),
    (
        "a ReplicaSet's requirements are added",
        WEB.owner("ReplicaSet", "rs").build(),
        ({"app": "web"},),
        "app=web,tier=web,track in (canary,stable)",
        False,
    ),
    ("a StatefulSet's requirements are added", WEB.owner("StatefulSet", "ss").build(), ({"app": "web"},), "app=web,tier", False),
    ("an invalid owner selector adds nothing", WEB.owner("ReplicaSet", "bad").build(), ({"app": "web"},), "app=web", False),
    ("an empty owner selector adds nothing", WEB.owner("ReplicaSet", "everything").build(), (), "", True),
    ("an unknown owner adds nothing", WEB.owner("ReplicaSet", "gone").build(), ({"app": "web"},), "app=web", False),
    ("an unsupported kind adds nothing", WEB.owner("Job", "rs", "batch/v1").build(), (), "", True),
    ("a wrong group is not a ReplicaSet", WEB.owner("ReplicaSet", "rs", "extensions/v1beta1").build(), (), "", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "the_pod", "services", "want", "empty"), CASES, ids=[c[0] for c in CASES]
)
def test_default_selector(
    name: str, the_pod: Pod, services: tuple[dict[str, str], ...], want: str, empty: bool
) -> None:
    selector = default_selector(the_pod, owner_lookup, services_lookup(*services))
    assert str(selector) == want
    assert selector.is_empty() is empty
    assert selector.matches(the_pod.metadata.labels or {})


def test_pods_selected_by_a_service_get_the_system_default_constraints() -> None:
    """upstream scoring_test "system defaulting, nodes don't have zone, pods match
    service": one hostname constraint with maxSkew 3 over the Service's selector."""
    from tests.unit.scheduler.plugins.test_podtopologyspread import _host_node, _pods, _score

    the_pod = pod("p").label("foo", "").build()
    candidates = [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
    pods = _pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    infos = node_infos(candidates, pods)
    plugin = PodTopologySpread(
        lister(infos), PodTopologySpreadArgs(), service_selectors=services_lookup({"foo": ""})
    )
    want = {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    assert run_scores(plugin, the_pod, infos) == want
    # Without the Service the pod gets no default constraints at all.
    alone = PodTopologySpread(lister(infos), PodTopologySpreadArgs())
    assert run_scores(alone, the_pod, infos) == framework.SKIP
    assert _score  # the shared helpers above are the scoring tests' own


def _service(name: str, selector: dict[str, str] | None, namespace: str = "default") -> Service:
    return Service(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ServiceSpec(ports=(ServicePort(port=80),), selector=selector),
    )


def test_spread_listers_read_controllers_and_services(api: ApiService) -> None:
    """``setListers``' four listers through informers: controllers by name (O(1)),
    Services by the pairs of the pod's labels; a Service without a selector selects
    nothing (``GetPodServices``) and an empty one adds no label."""
    api.create(
        ReplicationController(
            metadata=ObjectMeta(name="rc", namespace="default"),
            spec=ReplicationControllerSpec(
                replicas=1, selector={"app": "web"}, template=pod_template({"app": "web"})
            ),
        )
    )
    api.create(
        ReplicaSet(
            metadata=ObjectMeta(name="rs", namespace="default"),
            spec=ReplicaSetSpec(
                replicas=1,
                selector=LabelSelector(match_labels={"app": "db"}),
                template=pod_template({"app": "db"}),
            ),
        )
    )
    api.create(
        StatefulSet(
            metadata=ObjectMeta(name="ss", namespace="default"),
            spec=StatefulSetSpec(
                replicas=1,
                service_name="ss",
                selector=LabelSelector(match_labels={"app": "cache"}),
                template=pod_template({"app": "cache"}),
            ),
        )
    )
    api.create(Namespace(metadata=ObjectMeta(name="other")))
    for service in (
        _service("web", {"app": "web"}),
        _service("web-canary", {"app": "web", "track": "canary"}),
        _service("zz-all", {}),
        _service("headless", None),
        _service("web", {"app": "web"}, namespace="other"),
        _service("db", {"app": "db"}),
    ):
        api.create(service)
    spread = SpreadListers(api)
    for informer in spread.informers:
        informer.start()
        informer.pump()
    assert spread.owner_selector("v1", "ReplicationController", "default", "rc") == LabelSelector(
        match_labels={"app": "web"}
    )
    assert spread.owner_selector("apps/v1", "ReplicaSet", "default", "rs") == LabelSelector(
        match_labels={"app": "db"}
    )
    assert spread.owner_selector("apps/v1", "StatefulSet", "default", "ss") == LabelSelector(
        match_labels={"app": "cache"}
    )
    assert spread.owner_selector("apps/v1", "StatefulSet", "default", "rs") is None
    assert spread.owner_selector("v1", "ReplicationController", "other", "rc") is None
    assert spread.service_selectors("default", {"app": "web", "track": "canary"}) == [
        {"app": "web"},
        {"app": "web", "track": "canary"},
    ]
    assert spread.service_selectors("default", {"app": "web", "track": "stable"}) == [
        {"app": "web"}
    ]
    assert spread.service_selectors("default", {"app": "cache"}) == []
    assert spread.selected_by_service("default", {"app": "db"})
    assert not spread.selected_by_service("default", {"app": "cache"})
    assert not spread.selected_by_service("default", {})
    # Deleting a Service drops it from the index.
    api.delete(Service, "db", namespace="default")
    spread.services.pump()
    assert not spread.selected_by_service("default", {"app": "db"})
    assert selectors.EVERYTHING.is_empty()


def _fast_finds(*, with_service: bool) -> tuple[int, list[str]]:
    """Schedule eight ``app=web`` pods without a controller on four nodes; return how
    often the fast path ran and where the pods went."""
    from kubeprio.bench.workloads import Cluster
    from kubeprio.bench.workloads import pod_template as bench_pod

    cluster = Cluster(seed=3)
    cluster.add_nodes(4)
    if with_service:
        cluster.api.create(_service("web", {"app": "web"}))
    fast = cluster.scheduler.fast
    assert fast is not None
    finds = 0
    real_find = fast.find

    def counting_find(*args: Any, **kwargs: Any) -> Any:
        nonlocal finds
        finds += 1
        return real_find(*args, **kwargs)

    fast.find = counting_find  # type: ignore[method-assign]
    template = bench_pod("web-", "100m")
    labelled = evolve(template, metadata=evolve(template.metadata, labels={"app": "web"}))
    cluster.start()
    cluster.create_pods(labelled, 8)
    cluster.settle()
    assert cluster.scheduler.scheduled == 8
    pods = cluster.api.list(Pod, namespace="default").items
    return finds, sorted(p.spec.node_name or "" for p in pods if p.spec is not None)


def test_service_selected_pods_leave_the_fast_path() -> None:
    """A pod with no controller that a Service selects gets default spreading, a score
    the fast path does not compute, so it takes the general path; without the Service
    the same pods are plain."""
    finds, spread = _fast_finds(with_service=True)
    assert finds == 0
    plain_finds, _plain = _fast_finds(with_service=False)
    assert plain_finds == 8
    assert sorted(spread.count(n) for n in set(spread)) == [2, 2, 2, 2]
