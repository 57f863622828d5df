"""``kubeprio.io/usage`` per container: what the kubelet and the resource metrics both read.

docs/design.md ("Annotations kubeprio reads"): ``[container:]resource=quantity`` entries;
an unqualified entry belongs to the first app container; ``memory`` and
``ephemeral-storage`` feed node-pressure eviction, ``cpu`` only the resource metrics
(``kubectl top``); a pod without the annotation uses nothing.
"""

from __future__ import annotations

import pytest

from kubeprio.api import annotations
from kubeprio.api.podusage import ContainerUsage, declared_usage
from kubeprio.kubelet.eviction import ContainerStats
from kubeprio.kubelet.runtime import read_script
from tests.builders import pod

MI = 1024**2


def two_containers(usage: str | None):
    builder = pod("p").container()  # containers "c" (first) and "c1"
    if usage is not None:
        builder = builder.annotate(annotations.USAGE, usage)
    return builder.build()


USAGES = [
    (None, [ContainerUsage("c"), ContainerUsage("c1")]),
    ("memory=900Mi", [ContainerUsage("c", memory_bytes=900 * MI), ContainerUsage("c1")]),
    (
        "cpu=250m,c1:cpu=1.5,c1:memory=20Mi",
        [ContainerUsage("c", cpu_nanocores=250_000_000), ContainerUsage("c1", 1_500_000_000, 20 * MI)],
    ),
    # Entries for one container add up; CPU keeps its nano precision.
    ("cpu=1m,cpu=1n", [ContainerUsage("c", cpu_nanocores=1_000_001), ContainerUsage("c1")]),
    # Memory is whole bytes, rounded up as Quantity.Value does.
    ("memory=0.5", [ContainerUsage("c", memory_bytes=1), ContainerUsage("c1")]),
    ("ephemeral-storage=1Gi", [ContainerUsage("c", ephemeral_storage_bytes=1024 * MI), ContainerUsage("c1")]),
    # Resources nothing reads are accepted and ignored.
    ("nvidia.com/gpu=1", [ContainerUsage("c"), ContainerUsage("c1")]),
]  # fmt: skip


@pytest.mark.parametrize(("usage", "expected"), USAGES, ids=[str(u) for u, _ in USAGES])
def test_usage_per_app_container_in_spec_order(usage, expected):
    assert list(declared_usage(two_containers(usage))) == expected


def test_a_container_the_pod_does_not_have_is_an_error():
    with pytest.raises(annotations.AnnotationError) as info:
        declared_usage(two_containers("sidecar:memory=1Mi"))
    assert str(info.value) == 'kubeprio.io/usage: pod has no container "sidecar"'


def test_the_kubelet_reads_memory_and_storage_and_ignores_cpu():
    # Eviction is unchanged by CPU entries: the kubelet has no CPU eviction signal.
    script = read_script(two_containers("cpu=3,memory=900Mi,c1:ephemeral-storage=1Gi"))
    assert script.stats.containers == (
        ContainerStats("c", memory=900 * MI),
        ContainerStats("c1", ephemeral_storage=1024 * MI),
    )
    assert script.errors == ()


def test_the_kubelet_reports_a_bad_usage_and_counts_nothing():
    script = read_script(two_containers("sidecar:memory=1Mi"))
    assert script.stats.containers == (ContainerStats("c"), ContainerStats("c1"))
    assert script.errors == ('kubeprio.io/usage: pod has no container "sidecar"',)
