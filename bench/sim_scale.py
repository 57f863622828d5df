"""Simulation at scale: 5,000 nodes, 150,000 pods submitted over an hour of virtual time.

    .venv/bin/python -m bench.sim_scale [--nodes 5000] [--pods 150000] [--seed 0]

Issue 4's scale shape: a priority mix (four classes, one non-preempting), churn (every
pod runs for a random ``kubeprio.io/duration`` then finishes, so room frees up and later
pods reuse it), and enough load that higher classes preempt lower ones. The manifests are
generated in memory, then run through ``kubeprio.sim.simulate`` exactly as
``kubeprio simulate`` would. Prints one JSON object: wall seconds, peak RSS, and counts
that prove the work was done (scheduled, preempted, still pending).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from kubeprio import gctuning
from kubeprio.api.manifest import Document
from kubeprio.bench.measure import peak_rss_bytes
from kubeprio.sim.simulate import simulate

CLASSES = (
    ("scale-batch", 100, "PreemptLowerPriority", 0.55),
    ("scale-opportunistic", 50, "Never", 0.20),
    ("scale-service", 1000, "PreemptLowerPriority", 0.20),
    ("scale-critical", 100000, "PreemptLowerPriority", 0.05),
)


def documents(nodes: int, pods: int, seed: int, horizon: float = 3600.0) -> list[Document]:
    """The scenario as manifest documents (what ``kubeprio simulate`` would read)."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "preemptionPolicy": policy,
        }
        for name, value, policy, _share in CLASSES
    ]
    for i in range(nodes):
        capacity = {"cpu": "4", "memory": "32Gi", "pods": "110"}
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{i:05d}"},
                "status": {"capacity": capacity, "allocatable": capacity},
            }
        )
    names = [c[0] for c in CLASSES]
    weights = [c[3] for c in CLASSES]
    for i in range(pods):
        klass = rng.choices(names, weights)[0]
        cpu = rng.choice(("100m", "250m", "500m", "1"))
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"p-{i:06d}",
                    "namespace": "default",
                    "annotations": {
                        "kubeprio.io/submit-at": f"{rng.uniform(0, horizon):.3f}s",
                        "kubeprio.io/duration": f"{rng.randint(60, 1800)}s",
                        "kubeprio.io/termination-seconds": "5",
                    },
                },
                "spec": {
                    "priorityClassName": klass,
                    "containers": [
                        {
                            "name": "c",
                            "image": "pause",
                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
                        }
                    ],
                },
            }
        )
    return [Document("generated", i, doc) for i, doc in enumerate(docs)]


def main() -> int:
    """Run the scale simulation and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gctuning.tune_for_throughput()  # as the `kubeprio` command does
    docs = documents(args.nodes, args.pods, args.seed)
    start = time.perf_counter()
    with gctuning.freezing_survivors():  # as `kubeprio simulate` runs it
        report, _cluster = simulate(docs, seed=args.seed)
    wall = time.perf_counter() - start
    pods = report["pods"]
    print(
        json.dumps(
            {
                "workload": "sim-scale",
                "nodes": args.nodes,
                "pods": args.pods,
                "virtual_seconds": report["endTime"],
                "wall_seconds": round(wall, 1),
                "peak_rss_bytes": peak_rss_bytes(),
                "scheduled": sum(1 for p in pods if p["scheduledAt"] is not None),
                "preemptions": len(report["preemptions"]),
                "pending_at_end": sum(1 for p in pods if p["node"] is None and not p["deleted"]),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
