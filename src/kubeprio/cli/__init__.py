"""The ``kubeprio`` command line: argument parsing and wiring only.

Each subcommand lives in a module of this package with a ``register(subparsers)``
function (``cli.check``: ``kubeprio check``); it builds the objects it needs (stores,
clocks, random generators, the admission chain: this package is a composition root)
and hands over to the layer that does the work. ``cli.manifests`` reads manifest files
for every command that takes ``PATH...``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kubeprio import __version__, gctuning
from kubeprio.cli import bench, check, serve, simulate


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kubeprio",
        description="A Kubernetes-compatible control plane built around pod priority and preemption.",
    )
    parser.add_argument("--version", action="version", version=f"kubeprio {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    check.register(subparsers)
    bench.register(subparsers)
    simulate.register(subparsers)
    serve.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    with gctuning.tuned_for_throughput():
        result: int = handler(args)
    return result
