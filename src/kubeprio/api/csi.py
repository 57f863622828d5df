"""storage.k8s.io/v1 CSIDriver, CSINode and VolumeAttachment: the CSI side of volumes.

Mirrors ``k8s.io/api/storage/v1/types.go`` (v1.32):

* ``CSIDriver`` (cluster-scoped, named after the driver) says how Kubernetes talks to a
  CSI driver: whether volumes need attaching, pod info on mount, storage capacity,
  fsGroup policy, token requests, lifecycle modes (``Persistent``/``Ephemeral``),
  republish and SELinux mounts. ``SetDefaults_CSIDriver`` fills every optional flag
  (``default_csi_driver`` below).
* ``CSINode`` (cluster-scoped, named after its Node) lists the CSI drivers registered on
  a node; ``spec.drivers[].allocatable.count`` is how many volumes of that driver the
  node may have attached, which the NodeVolumeLimits scheduler plugin enforces
  (``scheduler.plugins.nodevolumelimits``). The annotation
  ``storage.alpha.kubernetes.io/migrated-plugins`` lists the in-tree plugins the node
  serves through CSI.
* ``VolumeAttachment`` (cluster-scoped) asks an attacher to attach a volume to a node;
  ``status`` (a subresource) is the attacher's answer. Always-sent Go fields
  (``attached``) are defaulted so they round-trip as upstream writes them.

Validation is in ``api.validation.csi``, Tables in ``apiserver.csitables``. Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, evolve, extra_field, fast_init, json_name
from kubeprio.api.persistentvolume import PersistentVolumeSpec

LIFECYCLE_PERSISTENT: Final = "Persistent"
LIFECYCLE_EPHEMERAL: Final = "Ephemeral"
LIFECYCLE_MODES: Final = (LIFECYCLE_PERSISTENT, LIFECYCLE_EPHEMERAL)
"""``VolumeLifecycleMode`` values, in the order validation lists them."""
FS_GROUP_READ_WRITE_ONCE_WITH_FS_TYPE: Final = "ReadWriteOnceWithFSType"
FS_GROUP_POLICIES: Final = (FS_GROUP_READ_WRITE_ONCE_WITH_FS_TYPE, "File", "None")
"""``FSGroupPolicy`` values (``supportedFSGroupPolicy``)."""
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
"""``v1.MigratedPluginsAnnotationKey``: comma-separated in-tree plugins served via CSI."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequest:
    """A service account token the driver wants for pods it mounts volumes for."""

    audience: str | None = None
    expiration_seconds: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSIDriverSpec:
    """``spec`` of a CSIDriver."""

    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: tuple[str, ...] | None = None
    storage_capacity: bool | None = None
    fs_group_policy: str | None = None
    token_requests: tuple[TokenRequest, ...] | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = json_name("seLinuxMount")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSIDriver:
    """A storage.k8s.io/v1 CSIDriver (cluster-scoped)."""

    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "CSIDriver"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSIDriverSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeNodeResources:
    """``allocatable`` of a CSINode driver: how many of its volumes the node may attach."""

    count: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSINodeDriver:
    """One CSI driver registered on a node."""

    name: str | None = None
    node_id: str | None = json_name("nodeID")
    topology_keys: tuple[str, ...] | None = None
    allocatable: VolumeNodeResources | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSINodeSpec:
    """``spec`` of a CSINode: its drivers (merged by ``name`` in strategic patches)."""

    drivers: tuple[CSINodeDriver, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSINode:
    """A storage.k8s.io/v1 CSINode (cluster-scoped, named after its Node)."""

    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "CSINode"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeAttachmentSource:
    """What to attach: a PersistentVolume by name, or an inline (migrated) volume spec."""

    persistent_volume_name: str | None = None
    inline_volume_spec: PersistentVolumeSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeAttachmentSpec:
    """``spec`` of a VolumeAttachment (immutable)."""

    attacher: str | None = None
    source: VolumeAttachmentSource | None = None
    node_name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeError:
    """An attach or detach error reported by the attacher."""

    time: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeAttachmentStatus:
    """``status`` of a VolumeAttachment, written by the attacher."""

    attached: bool | None = None
    attachment_metadata: Mapping[str, str] | None = None
    attach_error: VolumeError | None = None
    detach_error: VolumeError | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeAttachment:
    """A storage.k8s.io/v1 VolumeAttachment (cluster-scoped)."""

    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "VolumeAttachment"
    metadata: ObjectMeta = ObjectMeta()
    spec: VolumeAttachmentSpec | None = None
    status: VolumeAttachmentStatus | None = None
    extra: JsonDict = extra_field()


EMPTY_ATTACHMENT_STATUS: Final = VolumeAttachmentStatus(attached=False)
"""A new VolumeAttachment's status: ``PrepareForCreate`` resets it, and Go always sends
the plain ``attached`` bool."""


def default_csi_driver(driver: CSIDriver) -> CSIDriver:
    """``SetDefaults_CSIDriver`` as in v1.32: ``attachRequired: true``, the other flags
    false, ``fsGroupPolicy: ReadWriteOnceWithFSType`` (CSIVolumeFSGroupPolicy is GA),
    ``volumeLifecycleModes: [Persistent]`` (CSIInlineVolume is GA) and ``seLinuxMount:
    false`` (SELinuxMountReadWriteOncePod is on by default)."""
    spec = driver.spec or CSIDriverSpec()
    changes: dict[str, Any] = {}
    if spec.attach_required is None:
        changes["attach_required"] = True
    for flag in ("pod_info_on_mount", "storage_capacity", "requires_republish", "se_linux_mount"):
        if getattr(spec, flag) is None:
            changes[flag] = False
    if spec.fs_group_policy is None:
        changes["fs_group_policy"] = FS_GROUP_READ_WRITE_ONCE_WITH_FS_TYPE
    if not spec.volume_lifecycle_modes:
        changes["volume_lifecycle_modes"] = (LIFECYCLE_PERSISTENT,)
    if not changes:
        return driver if driver.spec is not None else evolve(driver, spec=spec)
    return evolve(driver, spec=evolve(spec, **changes))


def default_volume_attachment(attachment: VolumeAttachment) -> VolumeAttachment:
    """Go decodes an absent ``status`` as its zero value and writes ``attached: false``."""
    status = attachment.status
    if status is None:
        return evolve(attachment, status=EMPTY_ATTACHMENT_STATUS)
    if status.attached is None:
        return evolve(attachment, status=evolve(status, attached=False))
    return attachment


def default_csi_node(csi_node: CSINode) -> CSINode:
    """Go always writes the (non-omitempty) ``spec`` of a CSINode, even an empty one."""
    return csi_node if csi_node.spec is not None else evolve(csi_node, spec=CSINodeSpec())


def driver_allocatable_counts(csi_node: CSINode) -> dict[str, int]:
    """Driver name -> ``allocatable.count``, for the drivers that declare one."""
    counts: dict[str, int] = {}
    for driver in csi_node_drivers(csi_node):
        allocatable = driver.allocatable
        if allocatable is not None and allocatable.count is not None:
            counts[driver.name or ""] = allocatable.count
    return counts


def csi_node_drivers(csi_node: CSINode) -> tuple[CSINodeDriver, ...]:
    """``spec.drivers`` (empty when unset)."""
    spec = csi_node.spec
    return spec.drivers or () if spec is not None else ()


def migrated_plugins(csi_node: CSINode) -> frozenset[str]:
    """The in-tree plugin names the node's migrated-plugins annotation lists."""
    value = (csi_node.metadata.annotations or {}).get(MIGRATED_PLUGINS_ANNOTATION, "")
    return frozenset(value.split(",")) if value else frozenset()
