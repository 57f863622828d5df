"""The ``kubeprio`` command line: argument parsing and wiring only, no logic.

Subcommands are registered by small functions in this module; each builds the objects
it needs (stores, clocks, random generators: this is a composition root) and hands
over to the layer that does the work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kubeprio import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kubeprio",
        description="A Kubernetes-compatible control plane built around pod priority and preemption.",
    )
    parser.add_argument("--version", action="version", version=f"kubeprio {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    result: int = handler(args)
    return result
