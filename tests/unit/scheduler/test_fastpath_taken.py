"""Performance guard (not timed): plain pods really take the vectorised fast path.

The fast path exists for speed only; nothing else would notice if a refactor made
``Scheduler`` fall back to running every plugin on every node. These tests count calls
instead of timing them: on the bench's cluster (``kubeprio.bench.workloads.Cluster``,
pods created through the API with the default admission chain) every attempt of a plain
pod calls ``FastPath.find`` once and no Filter or Score plugin at all, except on nodes
with nominated pods, which go through ``RunFilterPluginsWithNominatedPods`` (semantics
§5). The counting doubles wrap the real objects and delegate to them.
"""

from __future__ import annotations

import collections
from typing import Any

from kubeprio.api.core import Pod, Toleration
from kubeprio.api.model import evolve
from kubeprio.bench.workloads import HIGH_PRIORITY_CLASS, Cluster, pod_template
from kubeprio.scheduler.fastpath import FastPath, FastResult, is_plain_pod
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nodetable import IntArray
from kubeprio.scheduler.setup import load_config, new_scheduler
from tests.builders import pod, priority_class


class CountingFastPath(FastPath):
    """The real fast path, counting its calls."""

    def __init__(self, table: Any) -> None:
        super().__init__(table)
        self.finds = 0
        self.scores = 0

    def find(self, pod: PodInfo, **kwargs: Any) -> FastResult:
        self.finds += 1
        return super().find(pod, **kwargs)

    def score(self, pod: PodInfo, rows: IntArray) -> IntArray:
        self.scores += 1
        return super().score(pod, rows)


class CountingPlugin:
    """Delegates every extension point to ``inner``; counts Filter and Score calls."""

    def __init__(self, inner: Any, counts: collections.Counter[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.counts = counts

    def filter(self, *args: Any) -> Any:
        self.counts["filter"] += 1
        return self.inner.filter(*args)

    def score(self, *args: Any) -> Any:
        self.counts["score"] += 1
        return self.inner.score(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _instrumented(nodes: int) -> tuple[Cluster, CountingFastPath, collections.Counter[str]]:
    cluster = Cluster(seed=7)
    cluster.add_nodes(nodes)
    scheduler = cluster.scheduler
    assert scheduler.fast is not None, "new_scheduler must enable the fast path by default"
    fast = CountingFastPath(scheduler.cache.table)
    scheduler.fast = fast
    counts: collections.Counter[str] = collections.Counter()
    framework = scheduler.framework
    framework.filter_plugins = [CountingPlugin(p, counts) for p in framework.filter_plugins]  # type: ignore[misc]
    framework.score_plugins = [(CountingPlugin(p, counts), w) for p, w in framework.score_plugins]  # type: ignore[misc]
    cluster.start()
    return cluster, fast, counts


def test_bench_pods_are_plain() -> None:
    """The bench templates, after defaulting and Priority admission, qualify."""
    cluster = Cluster(seed=1)
    for template in (
        pod_template("a-", "100m"),
        pod_template("b-", "900m", grace=0),
        pod_template("c-", "3", priority_class=HIGH_PRIORITY_CLASS),
    ):
        created = cluster.api.create(template)
        assert is_plain_pod(PodInfo.of(created)), created


def test_plain_pods_use_the_fast_path_and_no_plugin() -> None:
    cluster, fast, counts = _instrumented(nodes=20)
    cluster.create_pods(pod_template("p-", "100m"), 30)
    cluster.create_pods(evolve(pod_template("be-", "100m"), spec=pod("x").build().spec), 5)
    cluster.settle()
    assert cluster.scheduler.scheduled == 35
    assert fast.finds == 35
    assert fast.scores == 35
    assert counts == {}


def test_only_nodes_with_nominated_pods_run_the_filter_plugins() -> None:
    cluster, fast, counts = _instrumented(nodes=20)
    # A pending pod nominated to node-00003 (as after a preemption in an earlier cycle)
    # that fits nowhere and may not preempt, so its nomination stays (semantics §4.1).
    cluster.api.create(priority_class("never", 5, policy="Never"))
    huge = cluster.api.create(pod_template("huge-", "64", priority_class="never"))
    cluster.api.patch(
        Pod,
        huge.metadata.name or "",
        {"status": {"nominatedNodeName": "node-00003"}},
        namespace="default",
        subresource="status",
    )
    cluster.create_pods(pod_template("p-", "100m"), 10)
    cluster.settle()
    scheduler = cluster.scheduler
    assert scheduler.scheduled == 10
    assert scheduler.nominated_pods_for_node("node-00003")
    attempts = scheduler.scheduled + scheduler.failed_attempts
    assert fast.finds == attempts
    # Per attempt only the nominated node went through the plugins: two passes for
    # the plain pods (with and without the nominated pod), and for the huge pod its
    # nominated node first (semantics §3.7) then its row in the fast path.
    filters = len(scheduler.framework.filter_plugins)
    assert 0 < counts["filter"] <= 2 * filters * attempts
    assert counts["score"] == 0


def test_pods_the_fast_path_cannot_express_take_the_general_path() -> None:
    """A toleration (or any constraint beyond cpu/memory/ephemeral-storage) turns the
    fast path off for that pod: the counters prove the guard above can fail."""
    cluster, fast, counts = _instrumented(nodes=5)
    template = pod_template("t-", "100m")
    assert template.spec is not None
    tolerant = evolve(
        template,
        spec=evolve(template.spec, tolerations=(Toleration(operator="Exists"),)),
    )
    cluster.create_pods(tolerant, 3)
    cluster.settle()
    assert cluster.scheduler.scheduled == 3
    assert fast.finds == 0
    assert counts["filter"] >= 3 * 5


def test_non_default_profiles_do_not_use_the_fast_path() -> None:
    """The fast path reproduces the default profile only (``setup.is_default_profile``)."""
    cluster = Cluster(seed=1)
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "percentageOfNodesToScore": 50}],
        }
    )
    scheduler = new_scheduler(
        cluster.api, clock=cluster.clock, rng=cluster.rng, config=config, fast_path=True
    )
    assert scheduler.fast is None
