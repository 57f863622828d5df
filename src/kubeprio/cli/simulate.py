"""``kubeprio simulate PATH...``: what Kubernetes would do with these manifests.

Reads manifests (files or directories; multi-document YAML/JSON; list kinds), a
``KubeSchedulerConfiguration`` (``--config``) and an AdmissionConfiguration
(``--admission-control-config-file``, ``cli.admissionconfig``) and the admission plugins
that are on (``--enable-admission-plugins``, ``--disable-admission-plugins``,
``cli.admissionflags``), runs them through ``sim.simulate`` and
prints a readable summary (``--output text``, rich tables) or the JSON report of
docs/design.md (``--output json``); ``--report FILE.html`` also writes the HTML report.
Malformed or unsupported input stops the run with the file and document it came from
(exit 2); admission rejections are part of the report, not errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import yaml
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from rich.table import Table

from kubeprio import gctuning
from kubeprio.api.annotations import AnnotationError, parse_duration
from kubeprio.api.manifest import Document, ManifestError
from kubeprio.cli import admissionconfig, admissionflags
from kubeprio.cli.manifests import LoadFailure, PathNotFoundError, read_documents
from kubeprio.scheduler.profile import ProfileError, SchedulerConfig
from kubeprio.scheduler.setup import load_config
from kubeprio.sim import html
from kubeprio.sim.report import to_json
from kubeprio.sim.simulate import simulate


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    parser = subparsers.add_parser(
        "simulate",
        help="simulate manifests: who schedules where, who gets preempted, who stays Pending",
        description=__doc__,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="manifest files or directories")
    parser.add_argument("--until", help="stop at this virtual time (a duration such as 10m)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--report", metavar="FILE.html", help="also write a self-contained HTML report"
    )
    parser.add_argument(
        "--config", metavar="SCHEDULER.yaml", help="a KubeSchedulerConfiguration file"
    )
    admissionconfig.add_flag(parser)
    admissionflags.add_flags(parser, command="simulate")
    parser.set_defaults(handler=run)


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def load_scheduler_config(path: str | None) -> SchedulerConfig | None:
    """Read a ``KubeSchedulerConfiguration`` file (None: the defaults)."""
    if path is None:
        return None
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: expected a KubeSchedulerConfiguration object")
    return load_config(data)


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print the report."""
    try:
        admission_plugins = admissionflags.enabled_plugins(args)
        loaded = read_documents(args.paths)
        config = load_scheduler_config(args.config)
        limited = admissionconfig.from_args(args)
        until = parse_duration(args.until) if args.until else None
    except (PathNotFoundError, ProfileError, AnnotationError, ManifestError, ValueError) as exc:
        return _fail(str(exc))
    for note in admissionflags.notes(args, command="simulate"):
        sys.stderr.write(note + "\n")
    failures = [item for item in loaded if isinstance(item, LoadFailure)]
    if failures:
        return _fail(failures[0].message)
    documents = [item for item in loaded if isinstance(item, Document)]
    console = Console(stderr=True)
    try:
        with Progress(
            SpinnerColumn(),
            TextColumn("simulating… t={task.fields[t]}"),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        ) as progress:
            task = progress.add_task("simulate", t="0s")
            # The run's state only grows: collections need not walk what survived one.
            with gctuning.freezing_survivors():
                report, _cluster = simulate(
                    documents,
                    seed=args.seed,
                    until=until,
                    scheduler_config=config,
                    limited_resources=limited,
                    admission_plugins=admission_plugins,
                    # Only a terminal shows the progress: elsewhere, no update per step.
                    on_step=(
                        (lambda t: progress.update(task, t=f"{t:g}s"))
                        if console.is_terminal
                        else None
                    ),
                )
    except ManifestError as exc:
        return _fail(str(exc))
    if args.report:
        Path(args.report).write_text(html.render(report), encoding="utf-8")
    if args.output == "json":
        sys.stdout.write(to_json(report))
    else:
        render_text(report, sys.stdout)
    return 0


# --- text output ----------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:g}s"


def render_text(report: dict[str, Any], stream: IO[str]) -> None:
    """The readable summary: placement, preemptions, pending pods, waits, rejections."""
    console = Console(file=stream, width=140, highlight=False)
    pods = report["pods"]
    live = [p for p in pods if not p["deleted"]]
    pending = [p for p in live if p["node"] is None and p["phase"] == "Pending"]
    console.print(
        f"simulated {report['endTime']:g}s (seed {report['seed']}): {len(pods)} pods, "
        f"{sum(1 for p in live if p['node'])} placed, {len(pending)} pending, "
        f"{len(report['preemptions'])} preemptions, {len(report['rejected'])} rejected"
    )
    console.print(_placement(live))
    if report["preemptions"]:
        table = Table(title="Preemptions", title_justify="left")
        for column in ("time", "preemptor", "node", "victims"):
            table.add_column(column)
        for item in report["preemptions"]:
            table.add_row(
                _seconds(item["time"]), item["preemptor"], item["node"], ", ".join(item["victims"])
            )
        console.print(table)
    if pending:
        table = Table(title="Pending pods", title_justify="left")
        for column in ("pod", "priority", "class", "why (FailedScheduling)"):
            table.add_column(column)
        for item in pending:
            table.add_row(
                f"{item['namespace']}/{item['name']}",
                str(item["priority"]),
                item["priorityClassName"] or "",
                item["pendingMessage"] or "",
            )
        console.print(table)
    table = Table(title="Waiting time per priority class", title_justify="left")
    for column in ("class", "priority", "pods", "scheduled", "mean wait", "max wait"):
        table.add_column(column)
    for row in report["waiting"]:
        table.add_row(
            row["priorityClassName"] or "(none)",
            str(row["priority"]),
            str(row["pods"]),
            str(row["scheduled"]),
            _seconds(row["meanWait"]),
            _seconds(row["maxWait"]),
        )
    console.print(table)
    if report["rejected"]:
        table = Table(title="Rejected", title_justify="left")
        for column in ("kind", "object", "code", "message"):
            table.add_column(column)
        for item in report["rejected"]:
            name = f"{item['namespace']}/{item['name']}" if item["namespace"] else item["name"]
            table.add_row(item["kind"], name or "", str(item["code"]), item["message"])
        console.print(table)


def _placement(pods: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="Final placement", title_justify="left")
    for column in ("node", "pods (priority)"):
        table.add_column(column)
    by_node: dict[str, list[str]] = {}
    for pod in pods:
        if pod["node"] and pod["phase"] not in ("Succeeded", "Failed"):
            by_node.setdefault(pod["node"], []).append(
                f"{pod['namespace']}/{pod['name']} ({pod['priority']})"
            )
    for node in sorted(by_node):
        table.add_row(node, "\n".join(sorted(by_node[node])))
    return table
