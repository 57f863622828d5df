"""``kubeprio serve``: a live control plane that kubectl and client libraries use as they are.

Parses the options, reads ``--nodes-file`` (Node manifests) and ``--scheduler-config``
(a ``KubeSchedulerConfiguration``), and hands over to ``serve.server.run``. Bad input
(a missing file, a manifest that is not only Nodes, an unknown preset, a port in use)
stops it with a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from kubeprio.api.annotations import AnnotationError, parse_duration
from kubeprio.api.core import Node
from kubeprio.api.manifest import ManifestError, decode_document
from kubeprio.api.quantity import QuantityError, parse_quantity
from kubeprio.apiserver.serviceranges import (
    DEFAULT_NODE_PORT_RANGE,
    DEFAULT_SERVICE_CIDR,
    NodePortRange,
    ServiceIPRange,
)
from kubeprio.cli.admissionconfig import read_limited_resources
from kubeprio.cli.manifests import LoadFailure, PathNotFoundError, read_documents
from kubeprio.cli.simulate import load_scheduler_config
from kubeprio.scheduler.profile import ProfileError
from kubeprio.serve.presets import PRESETS
from kubeprio.serve.server import ServeOptions
from kubeprio.serve.server import run as run_server
from kubeprio.store.errors import StorageFailureError


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="run a live control plane (HTTPS API, scheduler, controllers, simulated nodes)",
        description=__doc__,
    )
    parser.add_argument(
        "--data-dir", default=".kubeprio", help="state, certificates, tokens (default ./.kubeprio)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=6443, help="port (0: any free port)")
    parser.add_argument("--nodes", type=int, default=3, help="simulated nodes (default 3)")
    parser.add_argument("--node-cpu", default="4", help="CPU of each node (default 4)")
    parser.add_argument("--node-memory", default="16Gi", help="memory of each node (default 16Gi)")
    parser.add_argument(
        "--nodes-file", metavar="MANIFEST", help="create these Nodes instead of --nodes"
    )
    parser.add_argument(
        "--preset",
        choices=PRESETS,
        help="pre-create the priority classes (and tenants) of a profile",
    )
    parser.add_argument(
        "--scheduler-config", metavar="FILE", help="a KubeSchedulerConfiguration file"
    )
    parser.add_argument(
        "--event-ttl",
        default="1h0m0s",
        metavar="DURATION",
        help="how long an Event is kept after its last write, as kube-apiserver's flag "
        "(a Go duration; default 1h0m0s)",
    )
    parser.add_argument(
        "--service-cluster-ip-range",
        default=DEFAULT_SERVICE_CIDR,
        metavar="CIDR",
        help="cluster IPs of Services, as kube-apiserver's flag (default kubeadm's "
        f"{DEFAULT_SERVICE_CIDR}; the first address is the kubernetes Service's)",
    )
    parser.add_argument(
        "--service-node-port-range",
        default=DEFAULT_NODE_PORT_RANGE,
        metavar="RANGE",
        help=f"node ports of NodePort Services, as kube-apiserver's flag (default {DEFAULT_NODE_PORT_RANGE})",
    )
    parser.add_argument(
        "--admission-control-config-file",
        metavar="FILE",
        help="an AdmissionConfiguration, as kube-apiserver's flag: the ResourceQuota "
        "plugin's limitedResources (for example, pods of some PriorityClasses only where a "
        "quota covers them)",
    )
    parser.set_defaults(handler=run)


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def _read_nodes(path: str) -> list[Any]:
    nodes: list[Any] = []
    for item in read_documents([path]):
        if isinstance(item, LoadFailure):
            raise ManifestError(item.message, source=item.source)
        obj = decode_document(item)
        if not isinstance(obj, Node):
            raise ManifestError(
                f"--nodes-file takes Nodes, not {type(obj).__name__}",
                source=item.source,
                index=item.index + 1,  # counted from 1, as `kubeprio check` prints it
            )
        nodes.append(obj)
    return nodes


def run(args: argparse.Namespace) -> int:
    """Start the server; return when it is stopped."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    try:
        if args.nodes < 0:
            return _fail("--nodes must not be negative")
        parse_quantity(args.node_cpu)
        parse_quantity(args.node_memory)
        nodes = _read_nodes(args.nodes_file) if args.nodes_file else []
        limited = (
            read_limited_resources(args.admission_control_config_file)
            if args.admission_control_config_file
            else ()
        )
        config = load_scheduler_config(args.scheduler_config)
        event_ttl = parse_duration(args.event_ttl)
        if event_ttl <= 0:
            return _fail(f"--event-ttl must be positive, not {args.event_ttl}")
        try:
            ServiceIPRange(args.service_cluster_ip_range)
        except ValueError as exc:
            return _fail(f"--service-cluster-ip-range: {exc}")
        try:
            NodePortRange(args.service_node_port_range)
        except ValueError:
            return _fail(
                f"--service-node-port-range: invalid port range {args.service_node_port_range!r}"
            )
    except (PathNotFoundError, ManifestError, ProfileError, QuantityError, AnnotationError) as exc:
        return _fail(str(exc))
    options = ServeOptions(
        data_dir=Path(args.data_dir),
        host=args.host,
        port=args.port,
        nodes=args.nodes,
        node_cpu=args.node_cpu,
        node_memory=args.node_memory,
        node_objects=nodes,
        preset=args.preset,
        scheduler_config=config,
        event_ttl=event_ttl,
        service_cidr=args.service_cluster_ip_range,
        node_port_range=args.service_node_port_range,
        limited_resources=limited,
    )
    try:
        return run_server(options)
    except StorageFailureError as exc:
        return _fail(f"{exc} (is another kubeprio serve using {args.data_dir}?)")
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
