"""Table columns and cells of CSIDrivers, CSINodes and VolumeAttachments.

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``csiDriverColumnDefinitions``/``printCSIDriver``, ``csiNodeColumnDefinitions``/
``printCSINode``, ``volumeAttachmentColumnDefinitions``/``printVolumeAttachment``):

    CSIDriver         NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS
                      REQUIRESREPUBLISH MODES AGE
    CSINode           NAME DRIVERS AGE
    VolumeAttachment  NAME ATTACHER PV NODE ATTACHED AGE

Column descriptions are the v1.32 API field docs upstream reads from ``SwaggerDoc()``.
An unset flag prints as upstream's fallback (attachRequired true, the others false),
no token requests as ``<unset>``, no lifecycle modes as ``<none>``. Who drives it:
``apiserver.tables``. Rules: pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.csi import (
    CSIDriver,
    CSIDriverSpec,
    CSINode,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
    csi_node_drivers,
)
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

ATTACH_REQUIRED_DOC: Final = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."
POD_INFO_ON_MOUNT_DOC: Final = 'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. "csi.storage.k8s.io/pod.name": pod.Name "csi.storage.k8s.io/pod.namespace": pod.Namespace "csi.storage.k8s.io/pod.uid": string(pod.UID) "csi.storage.k8s.io/ephemeral": "true" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise "false"\n\n"csi.storage.k8s.io/ephemeral" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the "Persistent" and "Ephemeral" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn\'t support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.'
STORAGE_CAPACITY_DOC: Final = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."
TOKEN_REQUESTS_DOC: Final = 'tokenRequests indicates the CSI driver needs pods\' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: "csi.storage.k8s.io/serviceAccount.tokens": {\n  "<audience>": {\n    "token": <token>,\n    "expirationTimestamp": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.'
REQUIRES_REPUBLISH_DOC: Final = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."
LIFECYCLE_MODES_DOC: Final = 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is "Persistent", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is "Ephemeral". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.'
ATTACHER_DOC: Final = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName()."
NODE_NAME_DOC: Final = "nodeName represents the node that the volume should be attached to."
PV_NAME_DOC: Final = "persistentVolumeName represents the name of the persistent volume to attach."
ATTACHED_DOC: Final = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."

CSI_DRIVER_COLUMNS: Final = (
    name_column(),
    Column("AttachRequired", "boolean", ATTACH_REQUIRED_DOC),
    Column("PodInfoOnMount", "boolean", POD_INFO_ON_MOUNT_DOC),
    Column("StorageCapacity", "boolean", STORAGE_CAPACITY_DOC),
    Column("TokenRequests", "string", TOKEN_REQUESTS_DOC),
    Column("RequiresRepublish", "boolean", REQUIRES_REPUBLISH_DOC),
    Column("Modes", "string", LIFECYCLE_MODES_DOC),
    age_column(),
)


def print_csi_driver(driver: CSIDriver, now: float) -> tuple[Cells, RowConditions]:
    """``printCSIDriver``."""
    spec = driver.spec or CSIDriverSpec()
    modes = ",".join(spec.volume_lifecycle_modes or ()) or "<none>"
    token_requests = "<unset>"
    if spec.token_requests is not None:
        token_requests = ",".join(request.audience or "" for request in spec.token_requests)
    return [
        driver.metadata.name or "",
        True if spec.attach_required is None else spec.attach_required,
        bool(spec.pod_info_on_mount),
        bool(spec.storage_capacity),
        token_requests,
        bool(spec.requires_republish),
        modes,
        since(driver.metadata.creation_timestamp, now),
    ], None


CSI_NODE_COLUMNS: Final = (
    name_column(),
    Column(
        "Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"
    ),
    age_column(),
)


def print_csi_node(csi_node: CSINode, now: float) -> tuple[Cells, RowConditions]:
    """``printCSINode``: the number of registered drivers."""
    return [
        csi_node.metadata.name or "",
        len(csi_node_drivers(csi_node)),
        since(csi_node.metadata.creation_timestamp, now),
    ], None


VOLUME_ATTACHMENT_COLUMNS: Final = (
    name_column(),
    Column("Attacher", "string", ATTACHER_DOC, format="name"),
    Column("PV", "string", PV_NAME_DOC),
    Column("Node", "string", NODE_NAME_DOC),
    Column("Attached", "boolean", ATTACHED_DOC),
    age_column(),
)


def print_volume_attachment(
    attachment: VolumeAttachment, now: float
) -> tuple[Cells, RowConditions]:
    """``printVolumeAttachment``: an inline-spec attachment has an empty PV cell."""
    spec = attachment.spec or VolumeAttachmentSpec()
    source = spec.source or VolumeAttachmentSource()
    status = attachment.status
    return [
        attachment.metadata.name or "",
        spec.attacher or "",
        source.persistent_volume_name or "",
        spec.node_name or "",
        bool(status.attached) if status is not None else False,
        since(attachment.metadata.creation_timestamp, now),
    ], None
