"""In-tree volume plugins migrated to CSI: which driver serves them and under which handle.

Mirrors the parts of ``k8s.io/csi-translation-lib`` (v1.32) the scheduler's NodeVolumeLimits
needs, and ``nodevolumelimits/utils.go``:

* the in-tree plugins the library still translates, with their CSI drivers and volume
  source keys: ``kubernetes.io/aws-ebs`` (``ebs.csi.aws.com``), ``kubernetes.io/gce-pd``
  (``pd.csi.storage.gke.io``), ``kubernetes.io/azure-disk`` (``disk.csi.azure.com``),
  ``kubernetes.io/cinder`` (``cinder.csi.openstack.org``), ``kubernetes.io/portworx-volume``
  (``pxd.portworx.com``), ``kubernetes.io/azure-file`` (``file.csi.azure.com``) and
  ``kubernetes.io/vsphere-volume`` (``csi.vsphere.vmware.com``) -- ``IsInlineMigratable``,
  ``IsPVMigratable``, ``IsMigratableIntreePluginByName``, ``GetCSINameFromInTreeName``;
* the volume handle a translated volume gets (``TranslateInTreeInlineVolumeToCSI`` /
  ``TranslateInTreePVToCSI``): EBS's ``aws://zone/vol-id`` becomes ``vol-id``; a GCE PD
  becomes ``projects/UNSPECIFIED/zones/<zone>/disks/<name>`` (zone ``UNSPECIFIED`` inline,
  from the PV's zone label otherwise; a regional ``a__b`` zone label gives
  ``regions/<region>``); the others keep their ID or URI;
* ``isCSIMigrationOn``: only with a CSINode for the node; AWS EBS, GCE PD, Azure Disk and
  Cinder are always migrated in v1.32; Portworx (CSIMigrationPortworx, on by default in
  v1.32) only when the CSINode's ``storage.alpha.kubernetes.io/migrated-plugins``
  annotation lists it; Azure File and vSphere are not counted;
* ``GetCSIAttachLimitKey``: ``attachable-volumes-csi-<driver>``, cut to 23 characters of
  the driver plus 16 hex digits of its SHA-1 when it would reach 63 characters.

Simplified: a malformed ``aws://`` EBS ID is kept as it is rather than refused. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.csi import CSINode, migrated_plugins

ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
"""``v1helper.IsAttachableVolumeResourceName``: node allocatable keys that are limits."""
CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT: Final = 63
UNSPECIFIED: Final = "UNSPECIFIED"
ZONE_LABELS: Final = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGIONAL_ZONE_SEPARATOR: Final = "__"


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    """One in-tree plugin the translation library knows."""

    name: str
    driver: str
    source_key: str
    """The volume source's JSON key (``awsElasticBlockStore``)."""
    id_key: str
    """The key of the source that names the disk (``volumeID``)."""
    always_migrated: bool
    """``isCSIMigrationOn`` answers true without looking at the CSINode annotation."""
    counted: bool = True
    """False for plugins ``isCSIMigrationOn`` never accepts (Azure File, vSphere)."""


AWS_EBS: Final = InTreePlugin(
    "kubernetes.io/aws-ebs", "ebs.csi.aws.com", "awsElasticBlockStore", "volumeID", True
)
GCE_PD: Final = InTreePlugin(
    "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "gcePersistentDisk", "pdName", True
)
AZURE_DISK: Final = InTreePlugin(
    "kubernetes.io/azure-disk", "disk.csi.azure.com", "azureDisk", "diskURI", True
)
CINDER: Final = InTreePlugin(
    "kubernetes.io/cinder", "cinder.csi.openstack.org", "cinder", "volumeID", True
)
PORTWORX: Final = InTreePlugin(
    "kubernetes.io/portworx-volume", "pxd.portworx.com", "portworxVolume", "volumeID", False
)
AZURE_FILE: Final = InTreePlugin(
    "kubernetes.io/azure-file", "file.csi.azure.com", "azureFile", "shareName", False, False
)
VSPHERE: Final = InTreePlugin(
    "kubernetes.io/vsphere-volume",
    "csi.vsphere.vmware.com",
    "vsphereVolume",
    "volumePath",
    False,
    False,
)
IN_TREE_PLUGINS: Final = (AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX, AZURE_FILE, VSPHERE)
BY_NAME: Final = {plugin.name: plugin for plugin in IN_TREE_PLUGINS}
MIGRATABLE_SOURCE_KEYS: Final = tuple(plugin.source_key for plugin in IN_TREE_PLUGINS)
"""Volume source keys of migratable in-tree plugins (``IsInlineMigratable``)."""


def _source(spec: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = spec.get(key)
    return value if isinstance(value, Mapping) else None


def migratable_source(
    volume_or_pv_source: Mapping[str, Any],
) -> tuple[InTreePlugin, Mapping[str, Any]] | None:
    """The migratable in-tree plugin a pod volume (or a PV's source, its ``spec.extra``)
    uses, with its source; None for any other volume."""
    for plugin in IN_TREE_PLUGINS:
        source = _source(volume_or_pv_source, plugin.source_key)
        if source is not None:
            return plugin, source
    return None


def is_csi_migration_on(csi_node: CSINode | None, plugin: InTreePlugin) -> bool:
    """``isCSIMigrationOn`` of v1.32."""
    if csi_node is None or not plugin.counted:
        return False
    return plugin.always_migrated or plugin.name in migrated_plugins(csi_node)


def _ebs_volume_id(kubernetes_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://us-east-1a/vol-1`` -> ``vol-1``."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    return kubernetes_id[len("aws://") :].split("/", 1)[-1].strip("/")


def _gce_handle(name: str, zone_label: str) -> str:
    if REGIONAL_ZONE_SEPARATOR in zone_label:
        region = zone_label.split(REGIONAL_ZONE_SEPARATOR)[0].rsplit("-", 1)[0]
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{name}"
    return f"projects/{UNSPECIFIED}/zones/{zone_label or UNSPECIFIED}/disks/{name}"


def volume_handle(
    plugin: InTreePlugin, source: Mapping[str, Any], labels: Mapping[str, str] | None = None
) -> str:
    """The CSI volume handle of a translated in-tree volume (``labels``: the PV's, None
    for an inline volume)."""
    volume_id = str(source.get(plugin.id_key) or "")
    if plugin is AWS_EBS:
        return _ebs_volume_id(volume_id)
    if plugin is GCE_PD:
        zone = ""
        if labels is not None:
            zone = next((labels[key] for key in ZONE_LABELS if labels.get(key)), "")
        return _gce_handle(volume_id, zone)
    return volume_id


def csi_attach_limit_key(driver: str) -> str:
    """``GetCSIAttachLimitKey``."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver
