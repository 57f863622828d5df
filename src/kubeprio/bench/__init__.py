"""Benchmarks in the shapes of upstream scheduler_perf workloads (a composition root, layer 1)."""
