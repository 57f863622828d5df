"""``kubeprio check PATH...``: run manifests through the real write path and report.

Every document is decoded and applied, in input order, to an in-process
``ApiService`` (``MemoryStore``, a fixed clock, a seeded random generator, the default
admission chain, namespaces created on first use) — the same code ``serve`` and
``simulate`` use, so the answer is what kubeprio (and, where it mirrors upstream,
Kubernetes) would answer. An object that already exists (declared earlier in the
input, or one of the two system PriorityClasses and default namespaces the server
bootstraps) is applied as an update, like ``kubectl apply``: the fields the source
cluster's server set, ``resourceVersion`` and ``uid``, are dropped, so update rules, not
conflicts, are what get checked. (A real API server would refuse both: a stale
``resourceVersion`` as a 409 Conflict, a foreign ``uid`` because ``metadata.uid`` is
immutable, ValidateObjectMetaUpdate; a dump taken from one cluster always carries them.)

Per object the report says what admission did: the resolved priority, class and
preemption policy for pods (for Deployments, ReplicaSets, ReplicationControllers, DaemonSets, StatefulSets, Jobs and CronJobs, what a pod from the
template would get: a dry-run pod through the same path), the tenant owning the
namespace, and warnings; or the exact Status error. Input that cannot be decoded
(malformed YAML/JSON, unknown kinds or versions, bad quantities, int32 overflow) is
reported as 400 BadRequest naming file, document (1-based) and field, and nothing of
it is stored. The exit status is 0 when every object was admitted, 1 otherwise, 2 for
unusable arguments.

Output: a ``rich`` table (text), or with ``--output json`` one JSON array, one entry
per input object::

    {"kind", "namespace", "name", "allowed", "priority", "priorityClassName",
     "preemptionPolicy", "code", "reason", "message", "warnings"}
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from collections.abc import Sequence
from typing import IO, Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubeprio.admission import defaults, plugins, tenant
from kubeprio.api import errors, kinds, manifest
from kubeprio.api.batch import workload_pod_template
from kubeprio.api.core import Pod
from kubeprio.api.manifest import Document
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serialization import DecodeError
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.cli import admissionflags, manifests
from kubeprio.cli.manifests import LoadFailure
from kubeprio.store.memory import MemoryStore

CHECK_EPOCH: Final = 1_767_225_600.0
"""The fixed time of a check run (2026-01-01T00:00:00Z): same input, same output."""
CHECK_SEED: Final = 0
JSON_KEYS: Final = (
    "kind",
    "namespace",
    "name",
    "allowed",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "code",
    "reason",
    "message",
    "warnings",
)


class FixedClock:
    """A clock that always says ``CHECK_EPOCH``."""

    def now(self) -> float:
        """The fixed time."""
        return CHECK_EPOCH


@dataclasses.dataclass(slots=True)
class CheckResult:
    """What happened to one input object."""

    source: str
    kind: str | None
    namespace: str | None
    name: str | None
    allowed: bool
    action: str
    priority: int | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None
    tenant: str | None = None
    code: int | None = None
    reason: str | None = None
    message: str | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The entry of ``--output json`` (exactly the documented keys, in order)."""
        values = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "allowed": self.allowed,
            "priority": self.priority,
            "priorityClassName": self.priority_class_name,
            "preemptionPolicy": self.preemption_policy,
            "code": self.code,
            "reason": self.reason,
            "message": self.message,
            "warnings": list(self.warnings),
        }
        return {key: values[key] for key in JSON_KEYS}


def new_api(enabled: plugins.EnabledPlugins = plugins.DEFAULT) -> ApiService:
    """The in-process API a check runs against (deterministic, namespaces auto-created),
    with the ``enabled`` admission plugins."""
    store = MemoryStore()
    return ApiService(
        store,
        clock=FixedClock(),
        rng=random.Random(CHECK_SEED),
        admission=defaults.default_chain(StoreListers(store), enabled=enabled),
        auto_create_namespaces=True,
    )


def _raw_str(data: dict[str, Any], *keys: str) -> str | None:
    value: Any = data
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def _decode_failure(document: Document, detail: str) -> CheckResult:
    data = document.data
    return CheckResult(
        source=document.source,
        kind=_raw_str(data, "kind"),
        namespace=_raw_str(data, "metadata", "namespace"),
        name=_raw_str(data, "metadata", "name"),
        allowed=False,
        action="invalid",
        code=errors.BadRequestError.code,
        reason=errors.BadRequestError.reason,
        message=f"{document.source} (document {document.index + 1}): {detail}",
    )


def _decode(document: Document) -> Any:
    """Decode a document; raise ``ValueError`` with an upstream-style message on failure."""
    try:
        return manifest.decode_object(document.data)
    except kinds.UnknownKindError as exc:
        raise ValueError(str(exc)) from exc
    except DecodeError as exc:
        kind = _raw_str(document.data, "kind") or ""
        version = (_raw_str(document.data, "apiVersion") or "").rpartition("/")[2]
        where = f" (field {exc.path})" if exc.path else ""
        raise ValueError(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {exc.message}{where}'
        ) from exc


def _current(api: ApiService, model: type[Any], name: str | None, namespace: str | None) -> Any:
    """The stored object of that name, or None."""
    if not name:
        return None
    try:
        return api.get(model, name, namespace)
    except errors.NotFoundError:
        return None


def _template_pod(obj: Any) -> Pod | None:
    template = workload_pod_template(obj)
    if template is None:
        return None
    labels = template.metadata.labels if template.metadata is not None else None
    return Pod(
        metadata=ObjectMeta(
            generate_name=f"{obj.metadata.name}-",
            namespace=obj.metadata.namespace,
            labels=labels,
        ),
        spec=template.spec,
    )


def _report_priority(api: ApiService, result: CheckResult, stored: Any) -> None:
    """Fill the resolved priority of a pod, or of a pod from a workload's template."""
    pod: Any = stored
    if isinstance(stored, kinds.WORKLOAD_KINDS):
        pod = _template_pod(stored)
        if pod is None:
            return
        try:
            pod = api.create_object(pod, dry_run=True).obj
        except errors.StatusError as exc:
            result.warnings.append(
                f"pods created from this template would be rejected: {exc.message}"
            )
            return
    if isinstance(pod, Pod) and pod.spec is not None:
        result.priority = pod.spec.priority
        result.priority_class_name = pod.spec.priority_class_name or ""
        result.preemption_policy = pod.spec.preemption_policy


def apply_document(api: ApiService, document: Document) -> CheckResult:
    """Decode one document and create (or update) it through ``api``."""
    try:
        obj = _decode(document)
    except ValueError as exc:
        return _decode_failure(document, str(exc))
    info = kinds.for_object(obj)
    metadata: ObjectMeta = obj.metadata
    if info.namespaced and not metadata.namespace:
        # As kubectl does: an object without a namespace goes to the default one.
        metadata = evolve(metadata, namespace="default")
    namespace = metadata.namespace if info.namespaced else None
    result = CheckResult(
        source=document.source,
        kind=info.kind,
        namespace=namespace,
        name=metadata.name or metadata.generate_name,
        allowed=False,
        action="rejected",
    )
    try:
        current = _current(api, info.model, metadata.name, namespace)
        if current is not None:
            # Applied over the existing object: drop what the source cluster's server set
            # (the version precondition and its uid), as tools that re-apply dumps do.
            obj = evolve(obj, metadata=evolve(metadata, resource_version=None, uid=None))
            written = api.update_object(obj)
            unchanged = written.obj.metadata.resource_version == current.metadata.resource_version
            result.action = "unchanged" if unchanged else "updated"
        else:
            written = api.create_object(evolve(obj, metadata=metadata))
            result.action = "created"
    except errors.StatusError as exc:
        result.code = exc.status.code
        result.reason = exc.status.reason
        result.message = exc.message
        if namespace:
            owner = tenant.owning_tenant(api.listers, namespace)
            result.tenant = owner.metadata.name if owner is not None else None
        return result
    stored = written.obj
    result.allowed = True
    result.name = stored.metadata.name
    result.warnings.extend(written.warnings)
    if namespace:
        owner = tenant.owning_tenant(api.listers, namespace)
        result.tenant = owner.metadata.name if owner is not None else None
    _report_priority(api, result, stored)
    return result


def run_check(api: ApiService, items: Sequence[Document | LoadFailure]) -> list[CheckResult]:
    """Apply every item in order; one result per item."""
    results: list[CheckResult] = []
    for item in items:
        if isinstance(item, LoadFailure):
            results.append(
                CheckResult(
                    source=item.source,
                    kind=None,
                    namespace=None,
                    name=None,
                    allowed=False,
                    action="invalid",
                    code=errors.BadRequestError.code,
                    reason=errors.BadRequestError.reason,
                    message=item.message,
                )
            )
        else:
            results.append(apply_document(api, item))
    return results


# --- output --------------------------------------------------------------------------------


def _cell(value: object) -> Text:
    return Text("" if value is None else str(value))


def _table(results: Sequence[CheckResult]) -> Table:
    table = Table(box=None, padding=(0, 3, 0, 0), pad_edge=False, header_style="bold")
    for column, justify in (
        ("#", "right"),
        ("KIND", "left"),
        ("NAMESPACE", "left"),
        ("NAME", "left"),
        ("RESULT", "left"),
        ("PRIORITY", "right"),
        ("CLASS", "left"),
        ("POLICY", "left"),
        ("TENANT", "left"),
    ):
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for number, result in enumerate(results, start=1):
        table.add_row(
            _cell(number),
            _cell(result.kind),
            _cell(result.namespace),
            _cell(result.name),
            Text(result.action, style="" if result.allowed else "bold red"),
            _cell(result.priority),
            _cell(result.priority_class_name),
            _cell(result.preemption_policy),
            _cell(result.tenant),
        )
    return table


def _details(results: Sequence[CheckResult]) -> list[Text]:
    lines: list[Text] = []
    for number, result in enumerate(results, start=1):
        where = "/".join(part for part in (result.namespace, result.name) if part)
        what = " ".join(part for part in (f"#{number}", result.kind, where) if part)
        if not result.allowed:
            lines.append(
                Text(f"{what} ({result.source}): {result.code} {result.reason}", style="red")
            )
            lines.append(Text(f"    {result.message}"))
        lines.extend(
            Text(f"{what}: Warning: {warning}", style="yellow") for warning in result.warnings
        )
    rejected = sum(1 for result in results if not result.allowed)
    lines.append(
        Text(f"{len(results)} objects: {len(results) - rejected} admitted, {rejected} rejected")
    )
    return lines


def render_text(results: Sequence[CheckResult], stream: IO[str]) -> None:
    """Print a ``kubectl get``-like table, then every error and warning in full."""
    if stream.isatty():
        console = Console(file=stream, highlight=False)
        console.print(_table(results))
        for detail in _details(results):
            console.print(detail, soft_wrap=True)
        return
    # Not a terminal: no colours, no wrapping, no trailing padding (diff- and doc-friendly).
    console = Console(file=stream, highlight=False, no_color=True, width=1000)
    with console.capture() as capture:
        console.print(_table(results))
    for row in capture.get().splitlines():
        stream.write(row.rstrip() + "\n")
    for detail in _details(results):
        stream.write(detail.plain + "\n")


def render_json(results: Sequence[CheckResult], stream: IO[str]) -> None:
    """Print one JSON array, one entry per input object."""
    json.dump([r.to_json() for r in results], stream, indent=2)
    stream.write("\n")


def run(args: argparse.Namespace) -> int:
    """The ``check`` subcommand."""
    try:
        enabled = admissionflags.enabled_plugins(args)
        items = manifests.read_documents(args.paths)
    except (manifests.PathNotFoundError, ValueError) as exc:
        print(f"kubeprio check: {exc}", file=sys.stderr)
        return 2
    for note in admissionflags.notes(args, command="check"):
        print(note, file=sys.stderr)
    results = run_check(new_api(enabled), items)
    if args.output == "json":
        render_json(results, sys.stdout)
    else:
        render_text(results, sys.stdout)
    return 0 if all(r.allowed for r in results) else 1


def register(subparsers: Any) -> None:
    """Add ``check`` to the command line."""
    parser = subparsers.add_parser(
        "check",
        help="run manifests through admission and validation, report what happened",
        description=(
            "Load manifests (files or directories; YAML or JSON, multi-document, kind: List) "
            "and apply them in order to an in-process kubeprio API server. Print, per "
            "object, the resolved priority, class, preemption policy and tenant, or the "
            "exact error. Exit 1 if anything was rejected."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="manifest file or directory")
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text", help="output format"
    )
    admissionflags.add_flags(parser, command="check")
    parser.set_defaults(handler=run)
