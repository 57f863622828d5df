"""The Node object a kubelet registers and the conditions it reports on it.

``node_object`` builds what ``kubelet_node_status.go`` ``initialNode`` plus the status
setters (``pkg/kubelet/nodestatus/setters.go``) would post for a simulated machine:
capacity and allocatable, the well-known labels (``kubernetes.io/hostname``,
``kubernetes.io/os``, ``kubernetes.io/arch``), an ``InternalIP`` and ``Hostname``
address, the ``volumes.kubernetes.io/controller-managed-attach-detach`` annotation,
``nodeInfo`` and the four conditions (``MemoryPressure``, ``DiskPressure``,
``PIDPressure`` false, ``Ready`` true) with upstream's reasons and messages.

``pressure_condition`` gives the ``MemoryPressure``/``DiskPressure`` condition for the
eviction manager's verdict, and ``NODE_STATUS_EVENTS`` the event reason recorded when it
flips (``Node <name> status is now: NodeHasInsufficientMemory``). ``resumed_conditions``
is what a kubelet back from an outage posts (``Kubelet.resume``). Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import ipaddress
import zlib
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from kubeprio.api import serverversion
from kubeprio.api.core import (
    Node,
    NodeAddress,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    NodeSystemInfo,
    Taint,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.nodeconditions import NODE_READY
from kubeprio.api.quantity import Quantity, parse_quantity
from kubeprio.kubelet import eviction

KUBELET_VERSION: Final = serverversion.GIT_VERSION
"""Never newer than the API server (upstream's version-skew policy): the same release."""
DEFAULT_PODS: Final = "110"
NODE_PID_PRESSURE: Final = "PIDPressure"
CONDITION_TYPES: Final = (
    eviction.NODE_MEMORY_PRESSURE,
    eviction.NODE_DISK_PRESSURE,
    NODE_PID_PRESSURE,
    NODE_READY,
)
"""The conditions a kubelet reports, in upstream's order."""

# (status, reason, message) per condition type and truth value.
_CONDITION_TEXTS: Final[Mapping[str, Mapping[bool, tuple[str, str]]]] = {
    eviction.NODE_MEMORY_PRESSURE: {
        True: ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
        False: ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    },
    eviction.NODE_DISK_PRESSURE: {
        True: ("KubeletHasDiskPressure", "kubelet has disk pressure"),
        False: ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    },
    NODE_PID_PRESSURE: {
        True: ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
        False: ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    },
    NODE_READY: {
        True: ("KubeletReady", "kubelet is posting ready status"),
        False: ("KubeletNotReady", "kubelet is not ready"),
    },
}

NODE_STATUS_EVENTS: Final[Mapping[str, Mapping[bool, str]]] = {
    eviction.NODE_MEMORY_PRESSURE: {
        True: "NodeHasInsufficientMemory",
        False: "NodeHasSufficientMemory",
    },
    eviction.NODE_DISK_PRESSURE: {True: "NodeHasDiskPressure", False: "NodeHasNoDiskPressure"},
    NODE_READY: {True: "NodeReady", False: "NodeNotReady"},
}
"""``recordNodeStatusEvent`` reasons when a condition flips."""

CONTROLLER_MANAGED_ATTACH_ANNOTATION: Final = (
    "volumes.kubernetes.io/controller-managed-attach-detach"
)
"""Set to ``"true"`` by a kubelet whose volumes the attach/detach controller manages
(``initialNode``); ``kubectl describe node`` lists it under Annotations."""


def node_condition(type_: str, value: bool, *, now: str) -> NodeCondition:
    """A node condition with upstream's reason and message."""
    reason, message = _CONDITION_TEXTS[type_][value]
    return NodeCondition(
        type=type_,
        status="True" if value else "False",
        last_heartbeat_time=now,
        last_transition_time=now,
        reason=reason,
        message=message,
    )


def set_condition(
    conditions: Sequence[NodeCondition] | None, type_: str, value: bool, *, now: str
) -> tuple[tuple[NodeCondition, ...], bool]:
    """Set condition ``type_`` to ``value``; return the conditions and whether it flipped."""
    wanted = "True" if value else "False"
    result = list(conditions or ())
    for index, existing in enumerate(result):
        if existing.type != type_:
            continue
        if existing.status == wanted:
            return tuple(result), False
        result[index] = node_condition(type_, value, now=now)
        return tuple(result), True
    result.append(node_condition(type_, value, now=now))
    return tuple(result), True


def default_pod_cidr(node_name: str) -> str:
    """A stable ``/24`` inside ``10.0.0.0/8`` for a node that declares no ``podCIDR``."""
    digest = zlib.crc32(node_name.encode())
    return f"10.{(digest >> 8) & 0xFF}.{digest & 0xFF}.0/24"


def _quantities(values: Mapping[str, str | Quantity]) -> dict[str, Quantity]:
    return {
        name: value if isinstance(value, Quantity) else parse_quantity(value)
        for name, value in values.items()
    }


def node_object(
    name: str,
    *,
    capacity: Mapping[str, str | Quantity],
    allocatable: Mapping[str, str | Quantity] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    internal_ip: str | None = None,
    pod_cidr: str | None = None,
    now: str,
) -> Node:
    """The Node a kubelet registers (``initialNode`` plus the status setters).

    ``capacity`` gets ``pods: 110`` unless given; ``allocatable`` defaults to capacity.
    """
    capacity_q = _quantities(capacity)
    capacity_q.setdefault("pods", parse_quantity(DEFAULT_PODS))
    allocatable_q = dict(capacity_q)
    if allocatable is not None:
        allocatable_q.update(_quantities(allocatable))
    all_labels = default_labels(name)
    all_labels.update(labels or {})
    cidr = pod_cidr or default_pod_cidr(name)
    address = internal_ip or str(ipaddress.ip_network(cidr, strict=False).network_address + 1)
    machine_id = hashlib.md5(name.encode(), usedforsecurity=False).hexdigest()
    conditions = tuple(
        node_condition(type_, type_ == NODE_READY, now=now)
        for type_ in (
            eviction.NODE_MEMORY_PRESSURE,
            eviction.NODE_DISK_PRESSURE,
            NODE_PID_PRESSURE,
            NODE_READY,
        )
    )
    return Node(
        metadata=ObjectMeta(
            name=name,
            labels=all_labels,
            annotations={CONTROLLER_MANAGED_ATTACH_ANNOTATION: "true"},
        ),
        spec=NodeSpec(pod_cidr=cidr, taints=tuple(taints) or None),
        status=NodeStatus(
            capacity=capacity_q,
            allocatable=allocatable_q,
            conditions=conditions,
            addresses=(
                NodeAddress(type="InternalIP", address=address),
                NodeAddress(type="Hostname", address=name),
            ),
            node_info=NodeSystemInfo(
                kernel_version="6.1.0-kubeprio",
                os_image="kubeprio simulated node",
                container_runtime_version="containerd://2.0.0",
                kubelet_version=KUBELET_VERSION,
                extra={
                    "architecture": "amd64",
                    "operatingSystem": "linux",
                    # /etc/machine-id, the SMBIOS UUID and the boot id of a real machine:
                    # stable per node name here.
                    "machineID": machine_id,
                    "systemUUID": _uuid(machine_id),
                    "bootID": _uuid(machine_id[::-1]),
                    "kubeProxyVersion": "",
                },
            ),
        ),
    )


def _uuid(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:32]}"


def host_ip(node: Node) -> str:
    """The node's ``InternalIP``; for a node reporting none, the first address of its CIDR."""
    for address in (node.status.addresses if node.status else None) or ():
        if address.type == "InternalIP" and address.address:
            return address.address
    cidr = (node.spec.pod_cidr if node.spec else None) or default_pod_cidr(node.metadata.name or "")
    return str(ipaddress.ip_network(cidr, strict=False).network_address + 1)


def default_labels(name: str) -> dict[str, str]:
    """The well-known labels a kubelet puts on its Node (``initialNode``): hostname, OS
    and architecture, under their stable and beta keys."""
    return {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
    }


def reconciled_with_existing(node: Node) -> Node | None:
    """What a kubelet starting on an existing Node writes to its metadata
    (``tryRegisterWithAPIServer``), or None when nothing is missing:

    * ``reconcileCMADAnnotationWithExistingNode``: the ``controller-managed-attach-detach``
      annotation (the kubelet's ``--enable-controller-attach-detach`` defaults to true);
    * ``updateDefaultLabels``: each default label (``default_labels``) set to the
      kubelet's value where it is missing or differs; other labels stay.
    """
    meta = node.metadata
    annotations = meta.annotations or {}
    labels = meta.labels or {}
    wanted_labels = {**labels, **default_labels(meta.name or "")}
    if annotations.get(CONTROLLER_MANAGED_ATTACH_ANNOTATION) == "true" and wanted_labels == labels:
        return None
    wanted_annotations = {**annotations, CONTROLLER_MANAGED_ATTACH_ANNOTATION: "true"}
    return evolve(node, metadata=evolve(meta, labels=wanted_labels, annotations=wanted_annotations))


def with_ready_conditions(node: Node, *, now: str) -> Node | None:
    """The node with upstream's four conditions added if it reports no ``Ready``; else None."""
    status = node.status or NodeStatus()
    if any(c.type == NODE_READY for c in status.conditions or ()):
        return None
    conditions = list(status.conditions or ())
    present = {c.type for c in conditions}
    for type_ in (
        eviction.NODE_MEMORY_PRESSURE,
        eviction.NODE_DISK_PRESSURE,
        NODE_PID_PRESSURE,
        NODE_READY,
    ):
        if type_ not in present:
            conditions.append(node_condition(type_, type_ == NODE_READY, now=now))
    return evolve(node, status=evolve(status, conditions=tuple(conditions)))


def resumed_conditions(
    conditions: Sequence[NodeCondition] | None, pressure: Collection[str], *, now: str
) -> tuple[tuple[NodeCondition, ...], bool]:
    """The conditions a kubelet back from an outage posts (``setNodeStatus``): Ready True,
    the ``pressure`` ones True, the others False, each with a fresh heartbeat; and whether
    Ready flipped (the node lifecycle controller set them ``Unknown`` meanwhile)."""
    result = list(conditions or ())
    flipped = False
    for type_ in CONDITION_TYPES:
        value = type_ == NODE_READY or type_ in pressure
        wanted = "True" if value else "False"
        index = next((i for i, c in enumerate(result) if c.type == type_), None)
        if index is not None and result[index].status == wanted:
            result[index] = evolve(result[index], last_heartbeat_time=now)
            continue
        fresh = node_condition(type_, value, now=now)
        if index is None:
            result.append(fresh)
        else:
            result[index] = fresh
        flipped = flipped or type_ == NODE_READY
    return tuple(result), flipped
