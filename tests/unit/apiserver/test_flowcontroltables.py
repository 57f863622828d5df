"""The Tables of FlowSchemas and PriorityLevelConfigurations: upstream v1.32
``pkg/printers/internalversion/printers.go`` (``printFlowSchema``,
``printPriorityLevelConfiguration`` and their column definitions)."""

from __future__ import annotations

from kubeprio.api.flowcontrol import FlowSchema, FlowSchemaCondition, FlowSchemaStatus
from kubeprio.api.flowcontrolbootstrap import (
    CATCH_ALL_LEVEL,
    EXEMPT_LEVEL,
    EXEMPT_SCHEMA,
    SUGGESTED_LEVELS,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver import flowcontroltables
from kubeprio.clock import parse_rfc3339

NOW = parse_rfc3339("2026-01-01T01:00:00Z")
CREATED = evolve(ObjectMeta(), creation_timestamp="2026-01-01T00:00:00Z")


def test_flow_schema_columns_and_cells() -> None:
    assert [c.name for c in flowcontroltables.FLOW_SCHEMA_COLUMNS] == [
        "Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL",
    ]  # fmt: skip
    exempt = evolve(
        EXEMPT_SCHEMA,
        metadata=evolve(EXEMPT_SCHEMA.metadata, creation_timestamp=CREATED.creation_timestamp),
    )
    cells, _ = flowcontroltables.print_flow_schema(exempt, NOW)
    # No Dangling condition yet: "?"; no distinguisher: <none>; precedence a number.
    assert cells == ["exempt", "exempt", 1, "<none>", "60m", "?"]
    marked = evolve(
        exempt,
        status=FlowSchemaStatus(conditions=(FlowSchemaCondition(type="Dangling", status="True"),)),
    )
    assert flowcontroltables.print_flow_schema(marked, NOW)[0][-1] == "True"
    assert flowcontroltables.print_flow_schema(FlowSchema(), NOW)[0] == [
        "",
        "",
        0,
        "<none>",
        "<unknown>",
        "?",
    ]


def test_priority_level_cells() -> None:
    assert [c.name for c in flowcontroltables.PRIORITY_LEVEL_COLUMNS] == [
        "Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age",
    ]  # fmt: skip
    rows = [
        flowcontroltables.print_priority_level(level, NOW)[0][:6]
        for level in (EXEMPT_LEVEL, CATCH_ALL_LEVEL, SUGGESTED_LEVELS[0])
    ]
    assert rows == [
        ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"],
        ["catch-all", "Limited", 5, "<none>", "<none>", "<none>"],
        ["system", "Limited", 30, 64, 6, 50],
    ]
