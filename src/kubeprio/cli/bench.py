"""``kubeprio bench WORKLOAD``: run one scheduler_perf-shaped benchmark and print JSON.

Workloads and their default sizes are in ``kubeprio.bench.workloads``; ``--nodes``,
``--init-pods``, ``--pods`` and ``--seed`` override them. The output is one JSON object
per run (workload, sizes, pods/s average and percentiles, decision latencies in µs,
peak RSS, and the scheduled/preempted/unschedulable counts that prove the work was done).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kubeprio.api.model import evolve
from kubeprio.bench import workloads


def register(subparsers: Any) -> None:
    """Add the ``bench`` subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="run a scheduler benchmark (scheduler_perf shapes) and print JSON",
        description=__doc__,
    )
    parser.add_argument("workload", choices=workloads.WORKLOADS)
    parser.add_argument("--nodes", type=int, help="number of nodes")
    parser.add_argument(
        "--init-pods", type=int, help="pods created (and scheduled) before measuring"
    )
    parser.add_argument("--pods", type=int, help="pods measured")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the workload and print its JSON result."""
    shape = workloads.DEFAULT_SHAPES[args.workload]
    changes = {
        name: value
        for name, value in (
            ("nodes", args.nodes),
            ("init_pods", args.init_pods),
            ("pods", args.pods),
        )
        if value is not None
    }
    shape = evolve(shape, seed=args.seed, **changes)
    result = workloads.RUNNERS[args.workload](shape)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0
