"""CSIDriver, CSINode and VolumeAttachment validation.

Mirrors upstream v1.32 ``pkg/apis/storage/validation/validation.go``: ``ValidateCSIDriver``
/``ValidateCSIDriverUpdate`` (``attachRequired`` and ``volumeLifecycleModes`` immutable,
reported at upstream's misspelt path ``spec.attachedRequired``), ``ValidateCSINode``/
``ValidateCSINodeUpdate`` (the CSINode strategy allows node IDs up to 256 characters; a
registered driver cannot change), ``ValidateVolumeAttachment``, ``ValidateVolumeAttachmentV1``
and ``ValidateVolumeAttachmentUpdate`` (the spec is immutable), plus core's
``ValidateCSIDriverName``. MutableCSINodeAllocatableCount (v1.33) is not in v1.32, so a
driver's ``allocatable`` is as immutable as the rest of it.

Left out: the inline ``inlineVolumeSpec`` of a VolumeAttachment is only checked for
presence (not through ``ValidatePersistentVolumeSpec``). Metadata rules run in
``api.validation`` (VolumeAttachment and CSINode updates re-run them, as upstream's
update functions call the create ones). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.csi import (
    FS_GROUP_POLICIES,
    LIFECYCLE_MODES,
    CSIDriver,
    CSIDriverSpec,
    CSINode,
    CSINodeDriver,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
    VolumeError,
    csi_node_drivers,
)
from kubeprio.api.errors import FieldError, go_value
from kubeprio.api.gosyntax import GoPointer, GoSlice, GoStruct, string_slice
from kubeprio.api.serialization import to_dict, to_sparse_dict
from kubeprio.api.validation.meta import (
    FIELD_IMMUTABLE,
    KindUpdateValidator,
    KindValidator,
    child,
    dns1123_subdomain_errors,
    index,
    name_is_dns_subdomain,
    qualified_name_errors,
    validate_immutable,
    validate_nonnegative,
)

CSI_DRIVER_NAME_MAX_LENGTH: Final = 63
CSI_NODE_ID_MAX_LENGTH: Final = 256
"""``csiNodeIDLongerMaxLength``: the CSINode strategy validates with ``AllowLongNodeID``."""
MAX_ATTACHED_VOLUME_METADATA_SIZE: Final = 256 * (1 << 10)
MAX_VOLUME_ERROR_MESSAGE_SIZE: Final = 1024
MIN_TOKEN_SECONDS: Final = 600
MAX_TOKEN_SECONDS: Final = 1 << 32
EXACTLY_ONE_SOURCE: Final = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"


def validate_csi_driver_name(name: str, path: str) -> list[FieldError]:
    """Core ``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain (lower-cased)."""
    found: list[FieldError] = []
    if not name:
        found.append(errors.required(path, ""))
    if len(name) > CSI_DRIVER_NAME_MAX_LENGTH:
        found.append(errors.too_long(path, CSI_DRIVER_NAME_MAX_LENGTH))
    found.extend(errors.invalid(path, name, m) for m in dns1123_subdomain_errors(name.lower()))
    return found


# --- CSIDriver ---------------------------------------------------------------------------------


def _csi_driver_spec(driver: CSIDriver) -> list[FieldError]:
    """``validateCSIDriverSpec``."""
    spec = driver.spec or CSIDriverSpec()
    found: list[FieldError] = []
    for attr, path in (
        ("attach_required", "spec.attachedRequired"),
        ("pod_info_on_mount", "spec.podInfoOnMount"),
        ("storage_capacity", "spec.storageCapacity"),
    ):
        if getattr(spec, attr) is None:
            found.append(errors.required(path, ""))
    policy = spec.fs_group_policy
    if policy is not None and policy not in FS_GROUP_POLICIES:
        found.append(errors.not_supported("spec.fsGroupPolicy", policy, sorted(FS_GROUP_POLICIES)))
    audiences: set[str] = set()
    for position, request in enumerate(spec.token_requests or ()):
        request_path = index("spec.tokenRequests", position)
        audience = request.audience or ""
        if audience in audiences:
            found.append(errors.duplicate(child(request_path, "audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.expiration_seconds
        if seconds is None:
            continue
        seconds_path = child(request_path, "expirationSeconds")
        if seconds < MIN_TOKEN_SECONDS:
            found.append(
                errors.invalid(
                    seconds_path, seconds, "may not specify a duration less than 10 minutes"
                )
            )
        if seconds > MAX_TOKEN_SECONDS:
            found.append(
                errors.invalid(
                    seconds_path, seconds, "may not specify a duration larger than 2^32 seconds"
                )
            )
    for mode in spec.volume_lifecycle_modes or ():
        if mode not in LIFECYCLE_MODES:
            found.append(errors.not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES))
    if spec.se_linux_mount is None:
        found.append(errors.required("spec.seLinuxMount", ""))
    return found


def _lifecycle_modes(spec: CSIDriverSpec) -> GoSlice:
    return GoSlice("[]storage.VolumeLifecycleMode", spec.volume_lifecycle_modes)


def validate_csi_driver_update(new: CSIDriver, old: CSIDriver) -> list[FieldError]:
    """``ValidateCSIDriverUpdate``: the spec rules, then the two immutable fields."""
    found = _csi_driver_spec(new)
    new_spec, old_spec = new.spec or CSIDriverSpec(), old.spec or CSIDriverSpec()
    found.extend(
        validate_immutable(
            new_spec.attach_required, old_spec.attach_required, "spec.attachedRequired"
        )
    )
    if new_spec.volume_lifecycle_modes != old_spec.volume_lifecycle_modes:
        modes = go_value(_lifecycle_modes(new_spec), list(new_spec.volume_lifecycle_modes or ()))
        found.append(errors.invalid("spec.volumeLifecycleModes", modes, FIELD_IMMUTABLE))
    return found


# --- CSINode -----------------------------------------------------------------------------------


def _csi_node_driver(driver: CSINodeDriver, seen_names: set[str], path: str) -> list[FieldError]:
    """``validateCSINodeDriver``."""
    name = driver.name or ""
    found = validate_csi_driver_name(name, child(path, "name"))
    node_id = driver.node_id or ""
    node_id_path = child(path, "nodeID")
    if not node_id:
        found.append(errors.required(node_id_path, ""))
    if len(node_id) > CSI_NODE_ID_MAX_LENGTH:
        found.append(
            errors.invalid(
                node_id_path, node_id, f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less"
            )
        )
    allocatable = driver.allocatable
    if allocatable is not None and allocatable.count is not None:
        found.extend(validate_nonnegative(allocatable.count, child(path, "allocatable.count")))
    if name in seen_names:
        found.append(errors.duplicate(child(path, "name"), name))
    seen_names.add(name)
    # Upstream reports topology key errors at the driver's path, not the key's.
    keys: set[str] = set()
    for key in driver.topology_keys or ():
        if not key:
            found.append(errors.required(path, ""))
        if key in keys:
            found.append(errors.duplicate(path, key))
        keys.add(key)
        found.extend(qualified_name_errors(key, path))
    return found


def validate_csi_node(csi_node: CSINode) -> list[FieldError]:
    """``ValidateCSINode`` beyond metadata."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for position, driver in enumerate(csi_node_drivers(csi_node)):
        found.extend(_csi_node_driver(driver, seen, index("spec.drivers", position)))
    return found


def _driver_value(driver: CSINodeDriver) -> Any:
    """The driver as ``%#v`` prints a ``storage.CSINodeDriver`` (JSON when it holds a
    non-nil ``Allocatable`` pointer, whose address Go would print)."""
    typed = GoStruct(
        "storage.CSINodeDriver",
        (
            ("Name", driver.name or ""),
            ("NodeID", driver.node_id or ""),
            ("TopologyKeys", string_slice(driver.topology_keys)),
            ("Allocatable", GoPointer("*storage.VolumeNodeResources", driver.allocatable)),
        ),
    )
    return go_value(typed, to_sparse_dict(driver))


def validate_csi_node_update(new: CSINode, old: CSINode) -> list[FieldError]:
    """``ValidateCSINodeUpdate``: the create rules, and no registered driver may change."""
    found = validate_csi_node(new)
    for old_driver in csi_node_drivers(old):
        for new_driver in csi_node_drivers(new):
            if old_driver.name == new_driver.name and to_dict(old_driver) != to_dict(new_driver):
                found.append(
                    errors.invalid("spec.drivers", _driver_value(new_driver), FIELD_IMMUTABLE)
                )
    return found


# --- VolumeAttachment --------------------------------------------------------------------------


def _volume_error(error: VolumeError | None, path: str) -> list[FieldError]:
    if error is None or len(error.message or "") <= MAX_VOLUME_ERROR_MESSAGE_SIZE:
        return []
    # Upstream reports the metadata size limit here, not the message limit it checks.
    return [errors.too_long(child(path, "message"), MAX_ATTACHED_VOLUME_METADATA_SIZE)]


def validate_volume_attachment(attachment: VolumeAttachment) -> list[FieldError]:
    """``ValidateVolumeAttachment`` beyond metadata, then ``ValidateVolumeAttachmentV1``."""
    spec = attachment.spec or VolumeAttachmentSpec()
    found: list[FieldError] = []
    attacher = spec.attacher or ""
    if not attacher:
        found.append(errors.required("spec.attacher", ""))
    source = spec.source or VolumeAttachmentSource()
    pv_name = source.persistent_volume_name
    if source.inline_volume_spec is None and pv_name is None:
        found.append(errors.required("spec.source", EXACTLY_ONE_SOURCE))
    elif source.inline_volume_spec is not None and pv_name is not None:
        found.append(errors.forbidden("spec.source", EXACTLY_ONE_SOURCE))
    elif pv_name is not None and not pv_name:
        found.append(
            errors.required(
                "spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"
            )
        )
    node_name = spec.node_name or ""
    found.extend(
        errors.invalid("spec.nodeName", node_name, m) for m in name_is_dns_subdomain(node_name)
    )
    status = attachment.status
    if status is not None:
        metadata = status.attachment_metadata or {}
        if sum(len(k) + len(v) for k, v in metadata.items()) > MAX_ATTACHED_VOLUME_METADATA_SIZE:
            found.append(
                errors.too_long("status.attachmentMetadata", MAX_ATTACHED_VOLUME_METADATA_SIZE)
            )
        found.extend(_volume_error(status.attach_error, "status.attachError"))
        found.extend(_volume_error(status.detach_error, "status.detachError"))
    # ValidateVolumeAttachmentV1: the attacher is a CSI driver name, the PV name a PV's.
    found.extend(validate_csi_driver_name(attacher, "spec.attacher"))
    if pv_name is not None:
        found.extend(
            errors.invalid("spec.source.persistentVolumeName", pv_name, m)
            for m in name_is_dns_subdomain(pv_name)
        )
    return found


def _spec_value(spec: VolumeAttachmentSpec) -> Any:
    """A ``storage.VolumeAttachmentSpec`` as ``%#v`` prints it; its source holds pointers,
    so a set one falls back to JSON."""
    source = spec.source or VolumeAttachmentSource()
    typed = GoStruct(
        "storage.VolumeAttachmentSpec",
        (
            ("Attacher", spec.attacher or ""),
            (
                "Source",
                GoStruct(
                    "storage.VolumeAttachmentSource",
                    (
                        (
                            "PersistentVolumeName",
                            GoPointer("*string", source.persistent_volume_name),
                        ),
                        (
                            "InlineVolumeSpec",
                            GoPointer("*core.PersistentVolumeSpec", source.inline_volume_spec),
                        ),
                    ),
                ),
            ),
            ("NodeName", spec.node_name or ""),
        ),
    )
    return go_value(typed, to_sparse_dict(spec))


def validate_volume_attachment_update(
    new: VolumeAttachment, old: VolumeAttachment
) -> list[FieldError]:
    """``ValidateVolumeAttachmentUpdate``: the create rules, and the spec is read-only."""
    found = validate_volume_attachment(new)
    new_spec, old_spec = new.spec or VolumeAttachmentSpec(), old.spec or VolumeAttachmentSpec()
    if to_dict(new_spec) != to_dict(old_spec):
        found.append(errors.invalid("spec", _spec_value(new_spec), FIELD_IMMUTABLE))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    CSIDriver: _csi_driver_spec,
    CSINode: validate_csi_node,
    VolumeAttachment: validate_volume_attachment,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    CSIDriver: validate_csi_driver_update,
    CSINode: validate_csi_node_update,
    VolumeAttachment: validate_volume_attachment_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    VolumeAttachment: validate_volume_attachment_update,
}
