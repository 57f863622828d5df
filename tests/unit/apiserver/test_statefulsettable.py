"""The StatefulSet Table (``printStatefulSet`` in ``pkg/printers/internalversion/printers.go``).

NAME READY AGE; wide adds CONTAINERS IMAGES (no SELECTOR, unlike the other template
kinds). READY is ``status.readyReplicas/spec.replicas``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Container, PodSpec, PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.statefulset import StatefulSet, StatefulSetSpec, StatefulSetStatus
from kubeprio.apiserver import tables, workloadtables
from kubeprio.clock import parse_rfc3339

NOW = parse_rfc3339("2026-01-01T01:00:00Z")


def sts(replicas: int | None, ready: int | None) -> StatefulSet:
    template = PodTemplateSpec(
        spec=PodSpec(
            containers=(
                Container(name="nginx", image="nginx:1"),
                Container(name="log", image="fluent"),
            )
        )
    )
    return StatefulSet(
        metadata=ObjectMeta(name="web", creation_timestamp="2026-01-01T00:00:00Z"),
        spec=StatefulSetSpec(replicas=replicas, template=template),
        status=StatefulSetStatus(replicas=replicas, ready_replicas=ready),
    )


def test_columns_are_upstreams() -> None:
    columns, printer = tables.PRINTERS[StatefulSet]
    assert printer is workloadtables.print_stateful_set
    assert [(c.name, c.type, c.priority) for c in columns] == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
    ]


@pytest.mark.parametrize(
    ("obj", "ready"),
    [(sts(3, 2), "2/3"), (sts(0, None), "0/0"), (sts(2, None), "0/2")],
    ids=["partly ready", "scaled to zero", "none ready (omitted count)"],
)
def test_cells(obj: StatefulSet, ready: str) -> None:
    cells, _ = workloadtables.print_stateful_set(obj, NOW)
    assert cells == ["web", ready, "60m", "nginx,log", "nginx:1,fluent"]
