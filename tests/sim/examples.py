"""Running the examples of ``examples/`` for the golden-report tests.

Shared by ``tests/sim/test_examples.py`` (which compares) and ``tests/sim/regenerate.py``
(the only thing that writes ``tests/sim/expected/*.json``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from kubeprio.api.manifest import Document
from kubeprio.cli.manifests import LoadFailure, read_documents
from kubeprio.sim.report import to_json
from kubeprio.sim.simulate import simulate

ROOT: Final = Path(__file__).resolve().parents[2]
EXAMPLES_DIR: Final = ROOT / "examples"
EXPECTED_DIR: Final = Path(__file__).resolve().parent / "expected"

EXAMPLES: Final = (
    "who-gets-evicted",
    "kestrel-tiers",
    "openshift-classes",
    "graceful-starvation",
    "deployment-cascade",
    "daemonset-agent",
    "cronjob-forbid",
    "hpa-scale-up",
    "limitrange-defaults",
    "volume-binding",
    "node-failure",
    "admission-policy",
    "rwop-preemption",
)
"""The examples with a golden report (one directory of ``examples/`` each)."""

UNTIL: Final = {"cronjob-forbid": 4.5 * 3600, "node-failure": 20 * 60.0}
"""Examples that need ``--until`` (a CronJob always has a next run): its value in seconds,
as the example's README runs it."""

GOLDEN_SEED: Final = 0
"""The seed every golden report is made with."""


def documents(name: str) -> list[Document]:
    """The example's manifests, in the order ``kubeprio simulate examples/<name>`` reads them."""
    loaded = read_documents([str(EXAMPLES_DIR / name)])
    failures = [item for item in loaded if isinstance(item, LoadFailure)]
    assert not failures, failures
    return [item for item in loaded if isinstance(item, Document)]


def run(
    name: str,
    *,
    seed: int = GOLDEN_SEED,
    edit: Callable[[Document], Document | None] | None = None,
) -> dict[str, Any]:
    """Simulate an example; ``edit`` may change or drop (``None``) each document first."""
    docs = documents(name)
    if edit is not None:
        docs = [e for e in map(edit, docs) if e is not None]
    report, _cluster = simulate(docs, seed=seed, until=UNTIL.get(name))
    return report


def golden_path(name: str) -> Path:
    """Where the example's golden report lives."""
    return EXPECTED_DIR / f"{name}.json"


def golden_text(name: str) -> str:
    """The report text the golden file must hold, byte for byte."""
    return to_json(run(name))
