"""What a pod's life costs in a simulation: API calls, watch events and handler calls.

    .venv/bin/python -m bench.sim_accounting [--nodes 500] [--pods 15000] [--seed 0]
    .venv/bin/python -m bench.sim_accounting --manifests examples/deployment-cascade

Runs ``bench.sim_scale``'s scenario at a reduced size (or the manifests of a directory,
per pod created) and counts, through
``simulate``'s ``prepare`` hook (nothing is counted, and nothing costs, without it):

* every call of the in-process API service by verb, kind (with subresource) and the
  component that made it (the first frame on the stack in a component's package:
  the scheduler, the kubelet, a controller, the submitter, an informer's list/watch);
  calls the service makes to itself count once, as the outer call;
* every watch event each informer applied, and the handler calls it made.

Prints one table per count, with totals per pod. A bench tool: it wraps the cluster's
objects (instance attributes), never the modules.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.sim_scale import documents
from kubeprio import gctuning
from kubeprio.api.manifest import Document
from kubeprio.cli.manifests import LoadFailure, read_documents
from kubeprio.client.informer import Informer
from kubeprio.sim.cluster import SimCluster
from kubeprio.sim.simulate import simulate

VERBS = ("get", "list", "watch", "create", "update", "update_status", "patch", "delete")
"""Client methods whose first argument is a kind or an object."""

_PASS_THROUGH = (
    "kubeprio.client.",
    "kubeprio.apiserver.",
    "kubeprio.admission.",
    "kubeprio.store.",
    "bench.",
)
"""Packages a call passes through on its way from a component to the service."""


def _component(module: str) -> str | None:
    """The component a frame of ``module`` belongs to (None: keep walking out)."""
    if module == "kubeprio.client.informer":
        return "informer"
    if module.startswith(_PASS_THROUGH):
        return None
    for package in ("kubeprio.scheduler.", "kubeprio.kubelet."):
        if module.startswith(package):
            return package.split(".")[1]
    if module.startswith("kubeprio.controllers."):
        return "controller:" + module.rsplit(".", 1)[1]
    if module == "kubeprio.sim.scenario":
        return "submitter"
    return module


def _caller() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        found = _component(frame.f_globals.get("__name__", ""))
        if found is not None:
            return found
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _kind_of(verb: str, args: tuple[Any, ...]) -> str:
    if not args:
        return "?"
    first = args[0]
    name = first.__name__ if isinstance(first, type) else type(first).__name__
    return f"{name}/status" if verb == "update_status" else name


class Accounting:
    """Counts API calls and informer deliveries of one simulated cluster."""

    def __init__(self) -> None:
        self.calls: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.events: collections.Counter[str] = collections.Counter()
        self.handler_calls: collections.Counter[str] = collections.Counter()
        self._depth = 0

    def prepare(self, cluster: SimCluster) -> None:
        """Wrap ``cluster``'s API service and informers (``simulate``'s hook)."""
        api = cluster.api
        # The submitter writes through the service's object methods (as a restore would).
        counted: dict[str, tuple[str, Callable[[str, tuple[Any, ...]], str]]] = {
            **{verb: (verb, _kind_of) for verb in VERBS},
            "create_object": ("create", _kind_of),
            "update_object": ("update", _kind_of),
            "bind": ("create", lambda _verb, _args: "Pod/binding"),
            "evict": ("create", lambda _verb, _args: "Pod/eviction"),
        }
        for method, (verb, kind) in counted.items():
            setattr(api, method, self._counting(verb, getattr(api, method), kind))
        named: list[tuple[str, Informer[Any]]] = [
            ("shared", informer) for informer in cluster.informers.informers
        ]
        named += [("scheduler", informer) for informer in cluster.scheduler._pumped.informers]
        for owner, informer in named:
            self._count_deliveries(f"{owner}:{informer.kind.__name__}", informer)

    def _counting(
        self, verb: str, method: Callable[..., Any], kind: Callable[[str, tuple[Any, ...]], str]
    ) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if self._depth == 0:
                self.calls[(verb, kind(verb, args), _caller())] += 1
            self._depth += 1
            try:
                return method(*args, **kwargs)
            finally:
                self._depth -= 1

        return counted

    def _count_deliveries(self, name: str, informer: Informer[Any]) -> None:
        upsert, remove = informer._upsert, informer._remove

        def counted_upsert(obj: Any) -> None:
            self.events[name] += 1
            known = informer.get(obj.metadata.name or "", obj.metadata.namespace)
            handlers = informer._on_update if known is not None else informer._on_add
            if known is None or known.metadata.resource_version != obj.metadata.resource_version:
                self.handler_calls[name] += len(handlers)
            upsert(obj)

        def counted_remove(obj: Any) -> None:
            self.events[name] += 1
            if informer.get(obj.metadata.name or "", obj.metadata.namespace) is not None:
                self.handler_calls[name] += len(informer._on_delete)
            remove(obj)

        for method, counting in (("_upsert", counted_upsert), ("_remove", counted_remove)):
            setattr(informer, method, counting)


def _table(title: str, rows: list[tuple[str, int]], pods: int) -> None:
    print(f"\n{title}\n| what | count | per pod |\n| --- | ---: | ---: |")
    for what, count in rows:
        print(f"| {what} | {count:,} | {count / pods:.2f} |")
    total = sum(count for _what, count in rows)
    print(f"| **total** | {total:,} | {total / pods:.2f} |")


def _documents(directory: Path) -> list[Document]:
    """The manifests under ``directory``, read as ``kubeprio simulate`` reads them."""
    read = read_documents([str(directory)])
    failures = [item.message for item in read if isinstance(item, LoadFailure)]
    if failures:
        raise SystemExit("\n".join(failures))
    return [item for item in read if not isinstance(item, LoadFailure)]


def main() -> int:
    """Run the counted simulation and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=15000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--manifests", type=Path, help="a directory of YAML manifests instead")
    args = parser.parse_args()
    gctuning.tune_for_throughput()
    accounting = Accounting()
    start = time.process_time()
    with gctuning.freezing_survivors():
        report, _cluster = simulate(
            _documents(args.manifests)
            if args.manifests
            else documents(args.nodes, args.pods, args.seed),
            seed=args.seed,
            prepare=accounting.prepare,
        )
    cpu = time.process_time() - start
    pods = (
        sum(
            n
            for (verb, kind, _who), n in accounting.calls.items()
            if (verb, kind) == ("create", "Pod")
        )
        if args.manifests
        else args.pods
    )
    print(
        f"{args.manifests or f'{args.nodes} nodes'}, {pods} pods, {len(report['preemptions'])} preemptions, "
        f"{cpu:.1f} s CPU (counting included)"
    )
    writes: list[tuple[str, int]] = []
    reads: list[tuple[str, int]] = []
    for (verb, kind, who), n in sorted(accounting.calls.items(), key=lambda item: -item[1]):
        (reads if verb in ("get", "list", "watch") else writes).append(
            (f"{verb} {kind} ({who})", n)
        )
    _table("API writes", writes, pods)
    _table("API reads", reads, pods)
    _table(
        "Watch events applied, per informer",
        sorted(accounting.events.items(), key=lambda row: -row[1]),
        pods,
    )
    _table(
        "Handler calls, per informer",
        sorted(accounting.handler_calls.items(), key=lambda row: -row[1]),
        pods,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
