"""Run every scheduler benchmark at its default (scheduler_perf) size and write JSON.

    .venv/bin/python -m bench.run_all [--repeat 3] [--out bench/results]

Each workload runs ``--repeat`` times in a fresh process (so peak RSS is per run) through
``kubeprio bench``; the per-run JSON lines and a summary with the median of each figure
are written to ``--out``. The machine's load changes wall-clock figures: run it on an idle
machine and report medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from kubeprio.bench.workloads import WORKLOADS

MEDIAN_KEYS = (
    "pods_per_s",
    "pods_per_s_p50",
    "pods_per_s_with_events",
    "event_flush_s",
    "decision_p50_us",
    "decision_p99_us",
    "attempt_p50_us",
    "attempt_p99_us",
    "preemption_decision_p50_us",
    "preemption_decision_p99_us",
    "preemption_attempt_p50_us",
    "preemption_attempt_p99_us",
    "preemption_evaluation_p50_us",
    "preemption_evaluation_p99_us",
    "preemption_search_p50_us",
    "preemption_search_p99_us",
    "preemptions_per_s",
    "attempts_per_s",
    "peak_rss_bytes",
)


def main() -> int:
    """Run the set; print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # A run of some workloads keeps the others' figures from the last full set.
    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    for workload in args.workloads:
        runs = []
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, "-m", "kubeprio", "bench", workload],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append(json.loads(done.stdout))
        (out / f"{workload}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
        medians = {
            key: statistics.median(r[key] for r in runs)
            for key in MEDIAN_KEYS
            if all(key in r for r in runs)
        }
        summary[workload] = {"runs": len(runs), **medians}
        print(json.dumps({"workload": workload, **summary[workload]}), flush=True)
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
