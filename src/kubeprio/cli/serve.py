"""``kubeprio serve``: a live control plane that kubectl and client libraries use as they are.

Parses the options, reads ``--nodes-file`` (Node manifests) and ``--scheduler-config``
(a ``KubeSchedulerConfiguration``), and hands over to ``serve.server.run``. Bad input
(a missing file, a manifest that is not only Nodes, an unknown preset, an unknown admission
plugin, a port in use) stops it with a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from kubeprio.admission.defaulttolerationseconds import (
    DEFAULT_TOLERATION_SECONDS,
    DefaultTolerations,
)
from kubeprio.api.annotations import AnnotationError, parse_duration
from kubeprio.api.core import Node
from kubeprio.api.gotext import GO_FALSE, GO_TRUE
from kubeprio.api.manifest import ManifestError, decode_document
from kubeprio.api.quantity import QuantityError, parse_quantity
from kubeprio.api.validation.authentication import MAX_TOKEN_AGE_SECONDS
from kubeprio.apiserver.issuerdiscovery import jwks_uri_error
from kubeprio.apiserver.serviceranges import (
    DEFAULT_NODE_PORT_RANGE,
    DEFAULT_SERVICE_CIDR,
    NodePortRange,
    ServiceIPRange,
)
from kubeprio.apiserver.tokenrequest import DEFAULT_ISSUER
from kubeprio.cli import admissionconfig, admissionflags
from kubeprio.cli.manifests import LoadFailure, PathNotFoundError, read_documents
from kubeprio.cli.simulate import load_scheduler_config
from kubeprio.controllers.nodelifecycle import NodeLifecycleConfig
from kubeprio.scheduler.profile import ProfileError
from kubeprio.serve.presets import PRESETS
from kubeprio.serve.server import ServeOptions
from kubeprio.serve.server import run as run_server
from kubeprio.store.errors import StorageFailureError

MIN_MAX_EXPIRATION_SECONDS = 60 * 60
"""The shortest ``--service-account-max-token-expiration`` kube-apiserver accepts."""


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
        "--etcd-compaction-interval",
        default="0s",
        metavar="DURATION",
        help="compact the watch history this often, as kube-apiserver's flag: a watch from "
        "a resourceVersion older than the previous compaction ends with 410 Expired (a Go "
        "duration; default 0s: never, as the history is also kubeprio's watch cache)",
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
    admissionconfig.add_flag(parser)
    admissionflags.add_flags(parser, command="serve")
    parser.add_argument(
        "--service-account-issuer",
        action="append",
        metavar="ISSUER",
        help="the iss claim of service account tokens, as kube-apiserver's flag: repeatable, "
        "the first is written into new tokens, all are accepted (default kubeadm's "
        f"{DEFAULT_ISSUER})",
    )
    parser.add_argument(
        "--api-audiences",
        action="append",
        metavar="AUDIENCES",
        help="comma-separated audiences a token used against the API must have one of, as "
        "kube-apiserver's flag (default: the issuers)",
    )
    parser.add_argument(
        "--service-account-jwks-uri",
        default="",
        metavar="URI",
        help="the jwks_uri of the issuer discovery document at "
        "/.well-known/openid-configuration, as kube-apiserver's flag (an https URL; "
        "default: the server's address with /openid/v1/jwks)",
    )
    parser.add_argument(
        "--service-account-max-token-expiration",
        default="0s",
        metavar="DURATION",
        help="the longest lifetime of an issued token; longer requests are shortened, with "
        "a warning (a Go duration between 1h and 2^32s; default: no limit)",
    )
    parser.add_argument(
        "--service-account-extend-token-expiration",
        type=_go_bool,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="extend pod-bound tokens of 3607 s for the API audiences (those the "
        "ServiceAccount admission plugin asks for) to a year (default true)",
    )
    for flag, taint in (
        ("--default-not-ready-toleration-seconds", "node.kubernetes.io/not-ready"),
        ("--default-unreachable-toleration-seconds", "node.kubernetes.io/unreachable"),
    ):
        parser.add_argument(
            flag,
            type=int,
            default=DEFAULT_TOLERATION_SECONDS,
            metavar="INT",
            help=f"tolerationSeconds of the {taint}:NoExecute toleration the "
            f"DefaultTolerationSeconds plugin adds to every pod that lacks one "
            f"(default {DEFAULT_TOLERATION_SECONDS})",
        )
    lifecycle = parser.add_argument_group("node lifecycle (kube-controller-manager's flags)")
    for flag, default, text in (
        ("--node-monitor-period", "5s", "how often node health is checked"),
        ("--node-monitor-grace-period", "50s", "silence after which a node is Unknown"),
        ("--node-startup-grace-period", "1m0s", "the same for a node that never reported"),
    ):
        lifecycle.add_argument(
            flag, default=default, metavar="DURATION", help=f"{text} (default {default})"
        )
    for flag, rate, text in (
        ("--node-eviction-rate", 0.1, "nodes tainted per second in a healthy zone"),
        ("--secondary-node-eviction-rate", 0.01, "the same in an unhealthy large zone"),
        (
            "--unhealthy-zone-threshold",
            0.55,
            "share of not-Ready nodes that makes a zone unhealthy",
        ),
    ):
        lifecycle.add_argument(
            flag, type=float, default=rate, metavar="FLOAT", help=f"{text} (default {rate})"
        )
    lifecycle.add_argument(
        "--large-cluster-size-threshold",
        type=int,
        default=50,
        metavar="INT",
        help="zones above this size keep the secondary rate when unhealthy (default 50)",
    )
    parser.set_defaults(handler=run)


def _node_lifecycle(args: argparse.Namespace) -> NodeLifecycleConfig:
    """The node lifecycle flags (``AnnotationError`` for a bad duration)."""
    return NodeLifecycleConfig(
        node_monitor_period=parse_duration(args.node_monitor_period),
        node_monitor_grace_period=parse_duration(args.node_monitor_grace_period),
        node_startup_grace_period=parse_duration(args.node_startup_grace_period),
        node_eviction_rate=args.node_eviction_rate,
        secondary_node_eviction_rate=args.secondary_node_eviction_rate,
        large_cluster_size_threshold=args.large_cluster_size_threshold,
        unhealthy_zone_threshold=args.unhealthy_zone_threshold,
    )


def _go_bool(text: str) -> bool:
    """``strconv.ParseBool``, which pflag's boolean flags use."""
    if text in GO_TRUE:
        return True
    if text in GO_FALSE:
        return False
    raise argparse.ArgumentTypeError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _service_account_options(args: argparse.Namespace) -> dict[str, Any]:
    """The token options of ``ServeOptions``, checked as kube-apiserver checks them at start
    (``ValueError`` with its words)."""
    issuers = tuple(args.service_account_issuer or (DEFAULT_ISSUER,))
    if any(not issuer for issuer in issuers):
        raise ValueError("service-account-issuer is a required flag")
    audiences = tuple(
        audience for value in args.api_audiences or () for audience in value.split(",") if audience
    )
    maximum = parse_duration(args.service_account_max_token_expiration)
    if maximum != 0 and not MIN_MAX_EXPIRATION_SECONDS <= maximum <= MAX_TOKEN_AGE_SECONDS:
        raise ValueError(
            "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
        )
    jwks_uri = args.service_account_jwks_uri
    if jwks_uri and (problem := jwks_uri_error(jwks_uri)) is not None:
        raise ValueError(problem)
    return {
        "service_account_jwks_uri": jwks_uri,
        "service_account_issuers": issuers,
        "api_audiences": audiences,
        "service_account_max_token_expiration": int(maximum),
        "service_account_extend_token_expiration": args.service_account_extend_token_expiration,
    }


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
        try:
            admission_plugins = admissionflags.enabled_plugins(args)
        except ValueError as exc:
            return _fail(str(exc))
        if args.nodes < 0:
            return _fail("--nodes must not be negative")
        parse_quantity(args.node_cpu)
        parse_quantity(args.node_memory)
        nodes = _read_nodes(args.nodes_file) if args.nodes_file else []
        limited = admissionconfig.from_args(args)
        config = load_scheduler_config(args.scheduler_config)
        event_ttl = parse_duration(args.event_ttl)
        if event_ttl <= 0:
            return _fail(f"--event-ttl must be positive, not {args.event_ttl}")
        compaction_interval = parse_duration(args.etcd_compaction_interval)
        if compaction_interval < 0:
            return _fail(
                f"--etcd-compaction-interval must not be negative, not {args.etcd_compaction_interval}"
            )
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
        try:
            token_options = _service_account_options(args)
        except ValueError as exc:
            return _fail(str(exc))
        node_lifecycle = _node_lifecycle(args)
        if node_lifecycle.node_monitor_period <= 0:
            return _fail("--node-monitor-period must be positive")
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
        etcd_compaction_interval=compaction_interval,
        service_cidr=args.service_cluster_ip_range,
        node_port_range=args.service_node_port_range,
        limited_resources=limited,
        admission_plugins=admission_plugins,
        default_tolerations=DefaultTolerations(
            args.default_not_ready_toleration_seconds, args.default_unreachable_toleration_seconds
        ),
        node_lifecycle=node_lifecycle,
        **token_options,
    )
    for note in admissionflags.notes(args, command="serve"):
        sys.stderr.write(note + "\n")
    try:
        return run_server(options)
    except StorageFailureError as exc:
        return _fail(f"{exc} (is another kubeprio serve using {args.data_dir}?)")
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
