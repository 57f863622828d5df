"""The JSON report matches ``docs/simulate-report.schema.json`` (issue 4, "Done when").

The schema is the written form of DESIGN.md's "kubeprio simulate" contract plus the
report's extra keys. Every golden report, a real-cluster snapshot (which fills
``existing``) and a run that stops at ``--until`` are validated against it; the
schema itself is checked against its metaschema, and reports that break the contract
are refused.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate
from tests.conftest import REAL_CLUSTERS
from tests.sim.examples import EXAMPLES, ROOT, documents, golden_path

SCHEMA_PATH = ROOT / "docs" / "simulate-report.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, report: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(report)
    ]


@pytest.mark.parametrize("name", EXAMPLES, ids=EXAMPLES)
def test_golden_reports_match_the_schema(
    validator: jsonschema.Draft202012Validator, name: str
) -> None:
    report = json.loads(golden_path(name).read_text(encoding="utf-8"))
    assert _errors(validator, report) == []


def test_real_cluster_snapshot_report_matches_the_schema(
    validator: jsonschema.Draft202012Validator,
) -> None:
    docs: list[manifest.Document] = []
    for path in sorted(Path(REAL_CLUSTERS).glob("replicatedhq__troubleshoot__k3s-bundle-*.json")):
        docs += manifest.parse_text(path.read_text(encoding="utf-8"), path.name)
    report, _ = simulate(docs, seed=0)
    assert report["existing"]  # the dump re-declares the two system classes
    assert _errors(validator, report) == []


def test_report_cut_short_by_until_matches_the_schema(
    validator: jsonschema.Draft202012Validator,
) -> None:
    report, _ = simulate(documents("graceful-starvation"), seed=0, until=12.0)
    assert report["endTime"] == 12.0
    assert _errors(validator, report) == []


def _broken(report: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    broken = copy.deepcopy(report)
    target = broken
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return broken


_DELETE = object()

BROKEN = [
    ("version-2", ["version"], 2),
    ("missing-preemptions", ["preemptions"], _DELETE),
    ("pod-missing-scheduledAt", ["pods", 0, "scheduledAt"], _DELETE),
    ("pod-phase-unknown-word", ["pods", 0, "phase"], "Terminating"),
    ("pod-priority-string", ["pods", 0, "priority"], "1000"),
    ("pod-unexpected-key", ["pods", 0, "color"], "blue"),
    ("preemptor-not-a-pod-ref", ["preemptions", 0, "preemptor"], "nginx"),
    ("preemption-without-victims", ["preemptions", 0, "victims"], []),
    ("negative-time", ["events", 0, "time"], -1.0),
    ("event-type", ["events", 0, "type"], "Error"),
]


@pytest.mark.parametrize(("path", "value"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_schema_refuses_reports_that_break_the_contract(
    validator: jsonschema.Draft202012Validator, path: list[Any], value: Any
) -> None:
    report = json.loads(golden_path("graceful-starvation").read_text(encoding="utf-8"))
    assert _errors(validator, report) == []
    assert _errors(validator, _broken(report, path, value)) != []
