"""Server-side ``meta.k8s.io/v1 Table`` output: what ``kubectl get`` prints.

What it is: one printer per kind with upstream's column definitions and cell rules, from
``pkg/printers/internalversion/printers.go`` (``AddHandlers``, ``printPod``, ``printNode``,
``printEvent``, ...; the column primitives and ``HumanDuration`` are in
``apiserver.tableformat``, the Pod's cells in ``podtable``, the workload kinds' in
``workloadtables``, the Service and config kinds' in ``servicetables`` and
``configtables``, the RBAC kinds' in ``rbactables``). The server always prints the wide cells (upstream's table convertor passes ``Wide: true``); kubectl
shows the ``priority`` 1 columns only with ``-o wide``. Kinds without a printer (``Tenant``)
get ``Name, Age``.

Choice: upstream (#126529) shows PriorityClass's ``PreemptionPolicy`` by default; kubeprio
gives it ``priority: 1`` so ``kubectl get pc`` prints the classic four columns and
``-o wide`` adds it (issue 5's column set; docs/http-api.md).

Each row carries ``object``: ``PartialObjectMetadata`` by default, the full object for
``includeObject=Object``, nothing for ``None``; kubectl reads it for the NAMESPACE column
of ``-A`` and for ``--show-labels``.

Who drives it: ``apiserver.rest`` for list, get and watch with a Table ``Accept``. Rules:
pure; ``now`` comes from the caller's clock.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, Final

from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import APIService
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.certificates import CertificateSigningRequest
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.coordination import Lease
from kubeprio.api.core import Event, Namespace, Node, Pod
from kubeprio.api.csi import CSIDriver, CSINode, VolumeAttachment
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.ingress import Ingress, IngressClass
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.model import JsonDict
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.quota import ZERO
from kubeprio.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import to_dict
from kubeprio.api.service import Service
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.api.storageclass import StorageClass
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver import (
    admissionpolicytables,
    apiregistrationtables,
    autoscalingtables,
    certificatetables,
    configtables,
    csitables,
    flowcontroltables,
    networkingtables,
    podtable,
    rbactables,
    runtimeclasstables,
    servicetables,
    storagecapacitytables,
    storagetables,
    webhooktables,
    workloadtables,
)
from kubeprio.apiserver.tableformat import (
    AGE_DOC,
    NAME_DOC,
    NONE,
    UNKNOWN,
    Cells,
    Column,
    Printer,
    RowConditions,
    age_column,
    name_column,
    since,
)
from kubeprio.clock import parse_rfc3339, rfc3339

TABLE_API_VERSION: Final = "meta.k8s.io/v1"


class IncludeObject(enum.StrEnum):
    """``includeObject``: what each row's ``object`` holds."""

    NONE = "None"
    METADATA = "Metadata"
    OBJECT = "Object"


# --- shared helpers ------------------------------------------------------------------------


def _int_or_string(value: int | str | None) -> str:
    return "N/A" if value is None else str(value)


# --- printers ------------------------------------------------------------------------------

NODE_COLUMNS: Final = (
    name_column(),
    Column("Status", "string", "The status of the node"),
    Column("Roles", "string", "The roles of the node"),
    age_column(),
    Column("Version", "string", "Kubelet Version reported by the node."),
    Column("Internal-IP", "string", "List of addresses reachable to the node.", 1),
    Column("External-IP", "string", "List of addresses reachable to the node.", 1),
    Column("OS-Image", "string", "OS Image reported by the node from /etc/os-release.", 1),
    Column("Kernel-Version", "string", "Kernel Version reported by the node.", 1),
    Column("Container-Runtime", "string", "ContainerRuntime Version reported by the node.", 1),
)
NODE_ROLE_PREFIX: Final = "node-role.kubernetes.io/"
NODE_ROLE_LABEL: Final = "kubernetes.io/role"


def print_node(node: Node, now: float) -> tuple[Cells, RowConditions]:
    """``printNode``: Ready/NotReady/Unknown, ``SchedulingDisabled`` when cordoned."""
    status = node.status
    conditions = {c.type: c for c in (status.conditions if status else None) or ()}
    ready = conditions.get("Ready")
    states: list[str] = []
    if ready is None:
        states.append("Unknown")
    elif ready.status == "True":
        states.append("Ready")
    else:
        states.append("NotReady")
    if node.spec is not None and node.spec.unschedulable:
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (node.metadata.labels or {}).items():
        if key.startswith(NODE_ROLE_PREFIX) and key[len(NODE_ROLE_PREFIX) :]:
            roles.add(key[len(NODE_ROLE_PREFIX) :])
        elif key == NODE_ROLE_LABEL and value:
            roles.add(value)
    info = status.node_info if status else None
    addresses = (status.addresses if status else None) or ()

    def address(kind: str) -> str:
        for entry in addresses:
            if entry.type == kind and entry.address:
                return entry.address
        return NONE

    cells: Cells = [
        node.metadata.name or "",
        ",".join(states),
        ",".join(sorted(roles)) or NONE,
        since(node.metadata.creation_timestamp, now),
        (info.kubelet_version if info else None) or "",
        address("InternalIP"),
        address("ExternalIP"),
        (info.os_image if info else None) or UNKNOWN,
        (info.kernel_version if info else None) or UNKNOWN,
        (info.container_runtime_version if info else None) or UNKNOWN,
    ]
    return cells, None


EVENT_COLUMNS: Final = (
    Column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
    Column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
    Column("Reason", "string", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    Column("Object", "string", "The object that this event is about."),
    Column("Subobject", "string", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.", 1),
    Column("Source", "string", "The component reporting this event. Should be a short machine understandable string.", 1),
    Column("Message", "string", "A human-readable description of the status of this operation."),
    Column("First Seen", "string", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1),
    Column("Count", "string", "The number of times this event has occurred.", 1),
    Column("Name", "string", NAME_DOC, 1, "name"),
)  # fmt: skip


def print_event(event: Event, now: float) -> tuple[Cells, RowConditions]:
    """``printEvent`` (wide form): times fall back from lastTimestamp to first to eventTime."""
    first = since(event.first_timestamp, now) if event.first_timestamp else None
    if first is None:
        first = since(event.event_time, now)
    last = since(event.last_timestamp, now) if event.last_timestamp else first
    count: int = event.count or 0
    series = event.series
    if series is not None:
        last = since(series.last_observed_time, now)
        count = series.count or 0
    elif count == 0:
        count = 1
    ref = event.involved_object
    kind = ((ref.kind if ref else None) or "").lower()
    target = f"{kind}/{ref.name}" if ref is not None and ref.name else kind
    source = event.source
    component = (source.component if source else None) or event.reporting_component or ""
    host = (source.host if source else None) or event.reporting_instance or ""
    cells: Cells = [
        last,
        event.type or "",
        event.reason or "",
        target,
        (ref.field_path if ref else None) or "",
        f"{component}, {host}" if host else component,
        (event.message or "").strip(),
        first,
        count,
        event.metadata.name or "",
    ]
    return cells, None


NAMESPACE_COLUMNS: Final = (
    name_column(),
    Column("Status", "string", "The status of the namespace"),
    age_column(),
)


def print_namespace(ns: Namespace, now: float) -> tuple[Cells, RowConditions]:
    """``printNamespace``: NAME STATUS AGE."""
    phase = (ns.status.phase if ns.status else None) or ""
    return [ns.metadata.name or "", phase, since(ns.metadata.creation_timestamp, now)], None


PRIORITY_CLASS_COLUMNS: Final = (
    name_column(),
    Column("Value", "integer", "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."),
    Column("Global-Default", "boolean", "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."),
    age_column(),
    Column("PreemptionPolicy", "string", "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.", 1),
)  # fmt: skip


def print_priority_class(pc: PriorityClass, now: float) -> tuple[Cells, RowConditions]:
    """``printPriorityClass``: NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY."""
    return [
        pc.metadata.name or "",
        pc.value or 0,
        bool(pc.global_default),
        since(pc.metadata.creation_timestamp, now),
        pc.preemption_policy or NONE,
    ], None


LEASE_COLUMNS: Final = (
    name_column(),
    Column("Holder", "string", "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field."),
    age_column(),
)  # fmt: skip


def print_lease(lease: Lease, now: float) -> tuple[Cells, RowConditions]:
    """``printLease``: NAME HOLDER AGE (an unset holder prints empty)."""
    holder = (lease.spec.holder_identity if lease.spec else None) or ""
    return [lease.metadata.name or "", holder, since(lease.metadata.creation_timestamp, now)], None


SERVICE_COLUMNS: Final = (
    name_column(),
    Column("Type", "string", "How the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName."),
    Column("Cluster-IP", "string", "The Service's virtual IP (None for a headless Service)."),
    Column("External-IP", "string", "External IPs, the load balancer's ingress, or the ExternalName."),
    Column("Port(s)", "string", "The Service's ports: port[:nodePort]/protocol."),
    age_column(),
    Column("Selector", "string", "The labels of the pods behind the Service.", priority=1),
)  # fmt: skip


def print_service(service: Service, now: float) -> tuple[Cells, RowConditions]:
    """``printService``: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, wide SELECTOR."""
    middle, selector = servicetables.service_cells(service)
    age = since(service.metadata.creation_timestamp, now)
    return [service.metadata.name or "", *middle, age, selector], None


ENDPOINTS_COLUMNS: Final = (
    name_column(),
    Column("Endpoints", "string", "The ready addresses of the pods behind the Service."),
    age_column(),
)


def print_endpoints(endpoints: Endpoints, now: float) -> tuple[Cells, RowConditions]:
    """``printEndpoints``: NAME ENDPOINTS AGE."""
    cell = servicetables.endpoints_cell(endpoints)
    return [
        endpoints.metadata.name or "",
        cell,
        since(endpoints.metadata.creation_timestamp, now),
    ], None


ENDPOINT_SLICE_COLUMNS: Final = (
    name_column(),
    Column("AddressType", "string", "The type of the slice's addresses (IPv4, IPv6 or FQDN)."),
    Column("Ports", "string", "The ports every endpoint of the slice serves."),
    Column("Endpoints", "string", "The addresses of the slice's endpoints."),
    age_column(),
)


def print_endpoint_slice(slice_: EndpointSlice, now: float) -> tuple[Cells, RowConditions]:
    """``printEndpointSlice``: NAME ADDRESSTYPE PORTS ENDPOINTS AGE."""
    cells = servicetables.endpoint_slice_cells(slice_)
    return [
        slice_.metadata.name or "",
        *cells,
        since(slice_.metadata.creation_timestamp, now),
    ], None


RESOURCE_QUOTA_COLUMNS: Final = (
    name_column(),
    Column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
    Column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
    age_column(),
)  # fmt: skip


def print_resource_quota(quota: ResourceQuota, now: float) -> tuple[Cells, RowConditions]:
    """``printResourceQuota``: NAME REQUEST LIMIT AGE. Each enforced resource, by name, as
    ``name: used/hard``: ``limits.*`` in LIMIT, everything else in REQUEST."""
    status = quota.status
    hard = (status.hard if status is not None else None) or {}
    used = (status.used if status is not None else None) or {}
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):
        entry = f"{name}: {used.get(name, ZERO)}/{hard[name]}"
        (limit if name.split(".")[0] == "limits" else request).append(entry)
    return [
        quota.metadata.name or "",
        ", ".join(request),
        ", ".join(limit),
        since(quota.metadata.creation_timestamp, now),
    ], None


LIMIT_RANGE_COLUMNS: Final = (
    name_column(),
    Column("Created At", "date", AGE_DOC),
)


def print_limit_range(lr: LimitRange, now: float) -> tuple[Cells, RowConditions]:
    """``printLimitRange``: NAME and CREATED AT, the creation time in UTC as RFC 3339
    (``CreationTimestamp.UTC().Format(time.RFC3339)``), not an age."""
    created = lr.metadata.creation_timestamp
    return [
        lr.metadata.name or "",
        rfc3339(parse_rfc3339(created)) if created else "0001-01-01T00:00:00Z",
    ], None


PDB_COLUMNS: Final = (
    name_column(),
    Column("Min Available", "string", "The minimum number of pods that must be available."),
    Column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    Column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    age_column(),
)  # fmt: skip


def print_pdb(pdb: PodDisruptionBudget, now: float) -> tuple[Cells, RowConditions]:
    """``printPodDisruptionBudget``: ``N/A`` for an unset bound."""
    spec = pdb.spec
    return [
        pdb.metadata.name or "",
        _int_or_string(spec.min_available if spec else None),
        _int_or_string(spec.max_unavailable if spec else None),
        (pdb.status.disruptions_allowed if pdb.status else None) or 0,
        since(pdb.metadata.creation_timestamp, now),
    ], None


DEFAULT_COLUMNS: Final = (name_column(), age_column())


def print_default(obj: Any, now: float) -> tuple[Cells, RowConditions]:
    """Kinds without a printer: NAME AGE."""
    return [obj.metadata.name or "", since(obj.metadata.creation_timestamp, now)], None


PRINTERS: Final[dict[type[Any], tuple[tuple[Column, ...], Printer]]] = {
    Pod: (podtable.POD_COLUMNS, podtable.print_pod),
    Node: (NODE_COLUMNS, print_node),
    Event: (EVENT_COLUMNS, print_event),
    Namespace: (NAMESPACE_COLUMNS, print_namespace),
    PriorityClass: (PRIORITY_CLASS_COLUMNS, print_priority_class),
    PodDisruptionBudget: (PDB_COLUMNS, print_pdb),
    Lease: (LEASE_COLUMNS, print_lease),
    Service: (SERVICE_COLUMNS, print_service),
    Endpoints: (ENDPOINTS_COLUMNS, print_endpoints),
    ResourceQuota: (RESOURCE_QUOTA_COLUMNS, print_resource_quota),
    LimitRange: (LIMIT_RANGE_COLUMNS, print_limit_range),
    # The CRD REST's DefaultTableConvertor: the same NAME and CREATED AT columns.
    CustomResourceDefinition: (LIMIT_RANGE_COLUMNS, print_limit_range),
    Role: (rbactables.ROLE_COLUMNS, rbactables.print_role),
    ClusterRole: (rbactables.ROLE_COLUMNS, rbactables.print_role),
    RoleBinding: (rbactables.ROLE_BINDING_COLUMNS, rbactables.print_binding),
    ClusterRoleBinding: (rbactables.CLUSTER_ROLE_BINDING_COLUMNS, rbactables.print_binding),
    ConfigMap: (configtables.CONFIG_MAP_COLUMNS, configtables.print_config_map),
    Secret: (configtables.SECRET_COLUMNS, configtables.print_secret),
    ServiceAccount: (configtables.SERVICE_ACCOUNT_COLUMNS, configtables.print_service_account),
    EndpointSlice: (ENDPOINT_SLICE_COLUMNS, print_endpoint_slice),
    Deployment: (workloadtables.DEPLOYMENT_COLUMNS, workloadtables.print_deployment),
    ReplicaSet: (workloadtables.REPLICA_SET_COLUMNS, workloadtables.print_replica_set),
    ReplicationController: (
        workloadtables.REPLICATION_CONTROLLER_COLUMNS,
        workloadtables.print_replication_controller,
    ),
    DaemonSet: (workloadtables.DAEMON_SET_COLUMNS, workloadtables.print_daemon_set),
    StatefulSet: (workloadtables.STATEFUL_SET_COLUMNS, workloadtables.print_stateful_set),
    ControllerRevision: (
        workloadtables.CONTROLLER_REVISION_COLUMNS,
        workloadtables.print_controller_revision,
    ),
    Job: (workloadtables.JOB_COLUMNS, workloadtables.print_job),
    CronJob: (workloadtables.CRON_JOB_COLUMNS, workloadtables.print_cron_job),
    HorizontalPodAutoscaler: (autoscalingtables.HPA_COLUMNS, autoscalingtables.print_hpa),
    PersistentVolume: (
        storagetables.PERSISTENT_VOLUME_COLUMNS,
        storagetables.print_persistent_volume,
    ),
    PersistentVolumeClaim: (
        storagetables.PERSISTENT_VOLUME_CLAIM_COLUMNS,
        storagetables.print_persistent_volume_claim,
    ),
    StorageClass: (storagetables.STORAGE_CLASS_COLUMNS, storagetables.print_storage_class),
    CSIDriver: (csitables.CSI_DRIVER_COLUMNS, csitables.print_csi_driver),
    CSINode: (csitables.CSI_NODE_COLUMNS, csitables.print_csi_node),
    VolumeAttachment: (csitables.VOLUME_ATTACHMENT_COLUMNS, csitables.print_volume_attachment),
    CSIStorageCapacity: (
        storagecapacitytables.CSI_STORAGE_CAPACITY_COLUMNS,
        storagecapacitytables.print_csi_storage_capacity,
    ),
    APIService: (
        apiregistrationtables.API_SERVICE_COLUMNS,
        apiregistrationtables.print_api_service,
    ),
    RuntimeClass: (
        runtimeclasstables.RUNTIME_CLASS_COLUMNS,
        runtimeclasstables.print_runtime_class,
    ),
    PodTemplate: (workloadtables.POD_TEMPLATE_COLUMNS, workloadtables.print_pod_template),
    # ValidatingAdmissionPolicy kinds (admissionregistration.k8s.io/v1).
    ValidatingAdmissionPolicy: (
        admissionpolicytables.POLICY_COLUMNS,
        admissionpolicytables.print_policy,
    ),
    ValidatingAdmissionPolicyBinding: (
        admissionpolicytables.BINDING_COLUMNS,
        admissionpolicytables.print_binding,
    ),
    Ingress: (networkingtables.INGRESS_COLUMNS, networkingtables.print_ingress),
    IngressClass: (networkingtables.INGRESS_CLASS_COLUMNS, networkingtables.print_ingress_class),
    NetworkPolicy: (
        networkingtables.NETWORK_POLICY_COLUMNS,
        networkingtables.print_network_policy,
    ),
    # API Priority and Fairness.
    FlowSchema: (flowcontroltables.FLOW_SCHEMA_COLUMNS, flowcontroltables.print_flow_schema),
    PriorityLevelConfiguration: (
        flowcontroltables.PRIORITY_LEVEL_COLUMNS,
        flowcontroltables.print_priority_level,
    ),
    # certificates.k8s.io
    CertificateSigningRequest: (certificatetables.CSR_COLUMNS, certificatetables.print_csr),
    # admissionregistration.k8s.io webhook configurations.
    MutatingWebhookConfiguration: (
        webhooktables.WEBHOOK_CONFIGURATION_COLUMNS,
        webhooktables.print_webhook_configuration,
    ),
    ValidatingWebhookConfiguration: (
        webhooktables.WEBHOOK_CONFIGURATION_COLUMNS,
        webhooktables.print_webhook_configuration,
    ),
}
"""One printer per kind; anything else prints NAME AGE."""


TablePrinter = tuple[tuple[Column, ...], Printer]
"""A kind's Table columns and row printer."""


def printer_for(model: type[Any]) -> tuple[tuple[Column, ...], Printer]:
    """The columns and row printer of a model class."""
    return PRINTERS.get(model, (DEFAULT_COLUMNS, print_default))


def row_object(obj: Any, include: IncludeObject) -> JsonDict | None:
    """The ``object`` of a row: PartialObjectMetadata, the full object, or nothing."""
    if include is IncludeObject.NONE:
        return None
    if include is IncludeObject.OBJECT:
        return to_dict(obj)
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": TABLE_API_VERSION,
        "metadata": to_dict(obj.metadata),
    }


def build_table(
    model: type[Any],
    objects: Iterable[Any],
    *,
    now: float,
    resource_version: str | None,
    include: IncludeObject = IncludeObject.METADATA,
    with_columns: bool = True,
    continue_token: str | None = None,
    api_version: str = TABLE_API_VERSION,
    printer: TablePrinter | None = None,
) -> JsonDict:
    """A ``Table`` of ``objects``; ``with_columns=False`` omits the column definitions.

    ``printer`` overrides the model's columns and row printer (a custom resource's
    ``additionalPrinterColumns``, ``apiserver.crtables``).

    Upstream's watch encoder sends the column definitions only in the first event.
    """
    columns, print_row = printer or printer_for(model)
    rows: list[JsonDict] = []
    for obj in objects:
        cells, conditions = print_row(obj, now)
        row: JsonDict = {"cells": cells}
        if conditions:
            row["conditions"] = conditions
        partial = row_object(obj, include)
        if partial is not None:
            row["object"] = partial
        rows.append(row)
    metadata: JsonDict = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": metadata,
        "columnDefinitions": [c.to_json() for c in columns] if with_columns else None,
        "rows": rows,
    }
