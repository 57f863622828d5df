"""What ``PodInfo`` precomputes: non-zero requests (upstream ``framework.calculateResource``
with ``NonMissingContainerRequests``) and parsed affinity terms (upstream ``PodInfo.Update``)."""

from __future__ import annotations

import pytest

from kubeprio.api import selectors
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.snapshot import NodeInfo, host_ports
from tests.builders import affinity_term, label_selector, node, pod

MI = 1024 * 1024

NON_ZERO_CASES = [
    ("no containers: nothing assumed", pod("p").no_containers().build(), (0, 0)),
    ("one container without requests", pod("p").build(), (100, 200 * MI)),
    (
        "defaults apply per container",
        pod("p").no_containers().container({"cpu": "500m"}).container({}).build(),
        (600, 400 * MI),
    ),
    (
        "an explicit zero stays zero",
        pod("p").no_containers().container({"cpu": "0", "memory": "0"}).build(),
        (0, 0),
    ),
    (
        "init containers default too (max with the app sum)",
        pod("p")
        .no_containers()
        .container({"cpu": "50m", "memory": "1Mi"})
        .init_container({})
        .build(),
        (100, 200 * MI),
    ),
    (
        "overhead adds to the defaults",
        pod("p").overhead({"cpu": "10m", "memory": "1Mi"}).build(),
        (110, 201 * MI),
    ),
    (
        "complete requests need no defaults",
        pod("p").no_containers().container({"cpu": "1", "memory": "1Gi"}).build(),
        (1000, 1024 * MI),
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "want"), NON_ZERO_CASES, ids=[c[0] for c in NON_ZERO_CASES]
)
def test_non_zero_requests(name, the_pod, want):
    info = PodInfo.of(the_pod)
    assert (info.non_zero_cpu, info.non_zero_memory) == want


def test_node_info_sums_non_zero_requests():
    info = NodeInfo(
        node("n").build(),
        [PodInfo.of(pod("a").build()), PodInfo.of(pod("b").no_containers().build())],
    )
    assert (info.non_zero_cpu, info.non_zero_memory) == (100, 200 * MI)
    info.remove_pod(PodInfo.of(pod("a").build()))
    assert (info.non_zero_cpu, info.non_zero_memory) == (0, 0)


def test_affinity_terms_default_to_the_pods_namespace():
    term = affinity_term("zone", label_selector({"app": "web"}))
    info = PodInfo.of(pod("p", "team").pod_affinity(term).pod_anti_affinity(term, weight=7).build())
    terms = info.affinity_terms
    [required] = terms.required_affinity
    assert required.namespaces == frozenset({"team"})
    assert isinstance(required.namespace_selector, selectors.Nothing)
    assert required.topology_key == "zone"
    [preferred] = terms.preferred_anti_affinity
    assert preferred.weight == 7
    assert terms.errors == ()
    assert PodInfo.of(pod("q").build()).affinity is None


def test_affinity_term_matching():
    term = affinity_term(
        "zone", label_selector({"app": "web"}), namespace_selector=label_selector({"env": "prod"})
    )
    [parsed] = PodInfo.of(
        pod("p", "team").pod_affinity(term).build()
    ).affinity_terms.required_affinity
    web = pod("w", "other").label("app", "web").build()
    assert parsed.matches(web, {"env": "prod"})
    assert not parsed.matches(web, {"env": "dev"})
    assert not parsed.matches(web, None)
    assert not parsed.matches(pod("x", "other").build(), {"env": "prod"})


def test_a_bad_selector_empties_that_list_and_records_the_error():
    bad = affinity_term("zone", label_selector(None, ("app", "Bogus", ("x",))))
    good = affinity_term("zone", label_selector({"app": "web"}))
    terms = PodInfo.of(
        pod("p").pod_affinity(good).pod_affinity(bad).pod_anti_affinity(good).build()
    ).affinity_terms
    assert terms.required_affinity == ()
    assert len(terms.required_anti_affinity) == 1
    assert terms.error.startswith("requiredAffinityTerms: ")


def test_host_ports_include_sidecars_only():
    the_pod = (
        pod("p")
        .host_port(80)
        .host_port(53, "UDP", "10.0.0.1")
        .init_container({}, sidecar=True, host_port=8080)
        .init_container({}, host_port=9090)
        .build()
    )
    assert host_ports(PodInfo.of(the_pod)) == [
        ("0.0.0.0", "TCP", 8080),
        ("0.0.0.0", "TCP", 80),
        ("10.0.0.1", "UDP", 53),
    ]


def test_a_newer_object_with_the_same_spec_keeps_the_precomputed_parts() -> None:
    """Status writes keep the stored spec object: ``updated`` reuses requests and
    affinity instead of recomputing them; a changed spec is computed afresh."""
    import dataclasses

    from kubeprio.api.core import PodStatus
    from kubeprio.scheduler.framework import PodInfo

    first = pod("p").uid("u1").requests(cpu="250m", memory="1Gi").build()
    info = PodInfo.of(first)
    running = dataclasses.replace(first, status=PodStatus(phase="Running"))
    kept = info.updated(running)
    assert kept.pod is running
    assert kept.requests is info.requests
    assert kept == dataclasses.replace(info, pod=running)
    bigger = pod("p").uid("u1").requests(cpu="2", memory="1Gi").build()
    fresh = info.updated(bigger)
    assert fresh.requests is not info.requests
    assert fresh == PodInfo.of(bigger)
