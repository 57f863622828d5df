"""PersistentVolume, PersistentVolumeClaim and StorageClass validation.

Mirrors upstream v1.32 ``pkg/apis/core/validation/validation.go``
(``ValidatePersistentVolume``/``ValidatePersistentVolumeSpec``, ``validateVolumeNodeAffinity``,
``ValidatePersistentVolumeUpdate``, ``ValidatePersistentVolumeClaim``/``Spec``,
``validateDataSource``, ``ValidatePersistentVolumeClaimUpdate`` with its two storage-class
upgrade paths, ``ValidatePersistentVolumeClaimStatusUpdate``) and
``pkg/apis/storage/validation/validation.go`` (``ValidateStorageClass``,
``ValidateStorageClassUpdate``, ``validateAllowedTopologies``,
``ValidateTopologySelectorTerm``). ReadWriteOncePod is GA in v1.32 (always accepted);
VolumeAttributesClass and RecoverVolumeExpansionFailure are off.

Volume sources are in ``spec.extra``: only their count (exactly one) and the required
``path`` of ``hostPath`` and ``local`` are checked, not each source's own fields.

Where upstream appends ``cmp.Diff`` of the two specs to an immutability message, kubeprio
appends one ``-``/``+`` line pair per changed JSON field (Go's diff format of structs is
not reproduced). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.core import ResourceList
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoMap, go_syntax
from kubeprio.api.persistentvolume import (
    ACCESS_MODES,
    BETA_STORAGE_CLASS_ANNOTATION,
    CLAIM_BOUND,
    READ_WRITE_ONCE_POD,
    RECLAIM_DELETE,
    RECLAIM_POLICIES,
    RECLAIM_RECYCLE,
    RECLAIM_RETAIN,
    STORAGE,
    VOLUME_MODES,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    TypedLocalObjectReference,
    TypedObjectReference,
    volume_source_keys,
)
from kubeprio.api.quantity import Quantity
from kubeprio.api.serialization import to_dict, to_sparse_dict
from kubeprio.api.storageclass import BINDING_MODES, StorageClass, TopologySelectorTerm
from kubeprio.api.validation.affinity import validate_node_selector
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    key,
    name_is_dns_subdomain,
    validate_immutable,
    validate_label_name,
    validate_label_selector,
)

NOT_POSITIVE: Final = "must be greater than zero"
"""``isNotPositiveErrorMsg``."""
CLAIM_SPEC_IMMUTABLE: Final = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)
VOLUME_SOURCE_IMMUTABLE: Final = "spec.persistentvolumesource is immutable after creation"
STORAGE_CLASS_RECLAIM_POLICIES: Final = (RECLAIM_DELETE, RECLAIM_RETAIN)
"""The storage package's ``supportedReclaimPolicy``: no Recycle for a class."""
MAX_PROVISIONER_PARAMETER_LEN: Final = 512
MAX_PROVISIONER_PARAMETER_SIZE: Final = 256 * 1024


def _positive_quantity(value: Quantity, path: str) -> list[FieldError]:
    """``ValidatePositiveQuantityValue``."""
    return [] if value.sign() > 0 else [errors.invalid(path, str(value), NOT_POSITIVE)]


def _class_name(name: str | None, path: str) -> list[FieldError]:
    """``ValidateClassName`` of a non-empty name (a DNS subdomain)."""
    if not name:
        return []
    return [errors.invalid(path, name, message) for message in name_is_dns_subdomain(name)]


def _access_modes(modes: tuple[str, ...] | None, path: str, required: str) -> list[FieldError]:
    found: list[FieldError] = []
    if not modes:
        found.append(errors.required(path, required))
    rwop = other = False
    for mode in modes or ():
        if mode not in ACCESS_MODES:
            found.append(errors.not_supported(path, mode, sorted(ACCESS_MODES)))
        if mode == READ_WRITE_ONCE_POD:
            rwop = True
        elif mode in ACCESS_MODES:
            other = True
    if rwop and other:
        found.append(errors.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return found


def _json_diff(old: object, new: object) -> str:
    """One ``-``/``+`` line pair per top-level JSON field that differs (see module doc)."""
    before, after = to_sparse_dict(old), to_sparse_dict(new)
    lines: list[str] = []
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            lines.append(f"- {name}: {errors.go_json(before.get(name))}")
            lines.append(f"+ {name}: {errors.go_json(after.get(name))}")
    return "\n".join(lines)


# --- PersistentVolume ------------------------------------------------------------------------


def _capacity_value(capacity: ResourceList | None) -> GoValue:
    """``spec.capacity`` as a bad value: a ``core.ResourceList`` for ``%#v`` when it holds
    no quantity. A ``resource.Quantity`` prints as its Go struct (``resource.Quantity{i:
    resource.int64Amount{value:1, scale:0}, ...}``), whose inner form kubeprio does not
    keep, so a non-empty list shows as its JSON form instead."""
    if not capacity:
        return GoValue(go_syntax(GoMap("core.ResourceList", capacity)))
    return GoValue(errors.go_json({name: str(q) for name, q in capacity.items()}))


def validate_persistent_volume(pv: PersistentVolume) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec`` (not inline) for a volume's ``spec``."""
    spec = pv.spec
    path = "spec"
    if spec is None:
        return [
            errors.required(child(path, "accessModes"), ""),
            errors.required(child(path, "capacity"), ""),
            errors.not_supported(child(path, "capacity"), _capacity_value(None), [STORAGE]),
            errors.required(path, "must specify a volume type"),
        ]
    found = _access_modes(spec.access_modes, child(path, "accessModes"), "")
    capacity = spec.capacity or {}
    cap_path = child(path, "capacity")
    if not capacity:
        found.append(errors.required(cap_path, ""))
    if STORAGE not in capacity or len(capacity) > 1:
        found.append(errors.not_supported(cap_path, _capacity_value(spec.capacity), [STORAGE]))
    for name in sorted(capacity):
        found.extend(_positive_quantity(capacity[name], key(cap_path, name)))
    policy = spec.persistent_volume_reclaim_policy
    if policy and policy not in RECLAIM_POLICIES:
        found.append(
            errors.not_supported(
                child(path, "persistentVolumeReclaimPolicy"), policy, RECLAIM_POLICIES
            )
        )
    affinity_set = spec.node_affinity is not None
    if spec.node_affinity is not None:
        required = spec.node_affinity.required
        affinity_path = child(child(path, "nodeAffinity"), "required")
        if required is None:
            found.append(errors.required(affinity_path, "must specify required node constraints"))
        else:
            found.extend(validate_node_selector(required, affinity_path))
    sources = volume_source_keys(pv)
    for extra_source in sources[1:]:
        found.append(
            errors.forbidden(child(path, extra_source), "may not specify more than 1 volume type")
        )
    if not sources:
        found.append(errors.required(path, "must specify a volume type"))
    else:
        first = sources[0]
        body = spec.extra.get(first)
        if first in ("hostPath", "local") and not (isinstance(body, dict) and body.get("path")):
            found.append(errors.required(child(child(path, first), "path"), ""))
        if first == "local" and not affinity_set:
            found.append(
                errors.required(child(path, "nodeAffinity"), "Local volume requires node affinity")
            )
        if (
            first == "hostPath"
            and isinstance(body, dict)
            and str(body.get("path", "")).rstrip("/") == ""
            and body.get("path")
            and policy == RECLAIM_RECYCLE
        ):
            found.append(
                errors.forbidden(
                    child(path, "persistentVolumeReclaimPolicy"),
                    "may not be 'recycle' for a hostPath mount of '/'",
                )
            )
    found.extend(_class_name(spec.storage_class_name, child(path, "storageClassName")))
    if spec.volume_mode is not None and spec.volume_mode not in VOLUME_MODES:
        found.append(
            errors.not_supported(child(path, "volumeMode"), spec.volume_mode, VOLUME_MODES)
        )
    return found


def validate_persistent_volume_update(
    new: PersistentVolume, old: PersistentVolume
) -> list[FieldError]:
    """``ValidatePersistentVolumeUpdate``: the source, ``volumeMode`` and a set
    ``nodeAffinity`` are immutable (upstream's paths lack the ``spec.`` prefix)."""
    found = validate_persistent_volume(new)
    new_spec = new.spec
    old_spec = old.spec
    new_sources = {k: v for k, v in (new_spec.extra if new_spec else {}).items() if k in _SOURCES}
    old_sources = {k: v for k, v in (old_spec.extra if old_spec else {}).items() if k in _SOURCES}
    old_csi = old_sources.get("csi")
    new_csi = new_sources.get("csi")
    if (
        isinstance(old_csi, dict)
        and isinstance(new_csi, dict)
        and "controllerExpandSecretRef" not in old_csi
        and "controllerExpandSecretRef" in new_csi
    ):  # a controllerExpandSecretRef may be added once
        new_sources["csi"] = {k: v for k, v in new_csi.items() if k != "controllerExpandSecretRef"}
    if new_sources != old_sources:
        lines = [
            f"{sign} {name}: {errors.go_json(side.get(name))}"
            for name in sorted(set(new_sources) | set(old_sources))
            if new_sources.get(name) != old_sources.get(name)
            for sign, side in (("-", old_sources), ("+", new_sources))
        ]
        found.append(
            errors.forbidden(
                "spec.persistentvolumesource", f"{VOLUME_SOURCE_IMMUTABLE}\n" + "\n".join(lines)
            )
        )
    found.extend(
        validate_immutable(
            new_spec.volume_mode if new_spec else None,
            old_spec.volume_mode if old_spec else None,
            "volumeMode",
        )
    )
    old_affinity = old_spec.node_affinity if old_spec else None
    if old_affinity is not None:
        new_affinity = new_spec.node_affinity if new_spec else None
        found.extend(
            validate_immutable(
                new_affinity,
                old_affinity,
                "nodeAffinity",
                shown=None if new_affinity is None else to_sparse_dict(new_affinity),
            )
        )
    return found


_SOURCES: Final = frozenset(
    {
        "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd",
        "iscsi", "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile",
        "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
        "scaleIO", "local", "storageos", "csi",
    }
)  # fmt: skip


def validate_persistent_volume_status_update(
    new: PersistentVolume, old: PersistentVolume
) -> list[FieldError]:
    """``ValidatePersistentVolumeStatusUpdate``: metadata only (checked by the caller)."""
    return []


# --- PersistentVolumeClaim ---------------------------------------------------------------------


def _data_source(
    source: TypedLocalObjectReference | TypedObjectReference, path: str
) -> list[FieldError]:
    """``validateDataSource`` / ``validateDataSourceRef``."""
    found: list[FieldError] = []
    if not source.name:
        found.append(errors.required(child(path, "name"), ""))
    if not source.kind:
        found.append(errors.required(child(path, "kind"), ""))
    if not source.api_group and source.kind != "PersistentVolumeClaim":
        found.append(errors.invalid(path, source.kind or "", ""))
    return found


def validate_claim_spec(spec: PersistentVolumeClaimSpec | None, path: str) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec`` (also a StatefulSet's claim templates)."""
    spec = spec or PersistentVolumeClaimSpec()
    found = _access_modes(
        spec.access_modes, child(path, "accessModes"), "at least 1 access mode is required"
    )
    if spec.selector is not None:
        found.extend(validate_label_selector(spec.selector, child(path, "selector")))
    requests = (spec.resources.requests if spec.resources else None) or {}
    storage_path = key(child(path, "resources"), STORAGE)
    storage = requests.get(STORAGE)
    if storage is None:
        found.append(errors.required(storage_path, ""))
    else:
        found.extend(_positive_quantity(storage, storage_path))
    found.extend(_class_name(spec.storage_class_name, child(path, "storageClassName")))
    if spec.volume_mode is not None and spec.volume_mode not in VOLUME_MODES:
        found.append(
            errors.not_supported(child(path, "volumeMode"), spec.volume_mode, VOLUME_MODES)
        )
    if spec.data_source is not None:
        found.extend(_data_source(spec.data_source, child(path, "dataSource")))
    ref = spec.data_source_ref
    if ref is not None:
        found.extend(_data_source(ref, child(path, "dataSourceRef")))
    if ref is not None and ref.namespace:
        if spec.data_source is not None:
            found.append(
                errors.invalid(
                    path,
                    child(path, "dataSource"),
                    "may not be specified when dataSourceRef.namespace is specified",
                )
            )
    elif spec.data_source is not None and ref is not None:
        source = spec.data_source
        if (source.api_group or "", source.kind, source.name) != (
            ref.api_group or "",
            ref.kind,
            ref.name,
        ):
            found.append(
                errors.invalid(path, child(path, "dataSource"), "must match dataSourceRef")
            )
    return found


def validate_persistent_volume_claim(pvc: PersistentVolumeClaim) -> list[FieldError]:
    """``ValidatePersistentVolumeClaim`` beyond metadata."""
    return validate_claim_spec(pvc.spec, "spec")


def validate_persistent_volume_claim_update(
    new: PersistentVolumeClaim, old: PersistentVolumeClaim
) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimUpdate``: the spec is immutable except a first
    ``volumeName``, a bound claim's ``resources.requests.storage`` (never smaller), and
    ``storageClassName`` set from the beta annotation or from nil."""
    found = validate_persistent_volume_claim(new)
    new_spec = new.spec or PersistentVolumeClaimSpec()
    old_spec = old.spec or PersistentVolumeClaimSpec()
    new_annotations = new.metadata.annotations or {}
    old_annotations = old.metadata.annotations or {}
    new_cmp, old_cmp = new_spec, old_spec
    if not old_spec.volume_name:
        old_cmp = replace(old_cmp, volume_name=new_spec.volume_name)
    old_beta = old_annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    upgrade_from_annotation = (
        old_beta is not None
        and old_spec.storage_class_name is None
        and new_spec.storage_class_name is not None
        and new_spec.storage_class_name == old_beta
        and new_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, old_beta) == old_beta
    )
    if upgrade_from_annotation:
        new_cmp = replace(new_cmp, storage_class_name=None)
    else:
        new_beta = new_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        if new_beta != (old_beta or ""):
            found.append(
                errors.invalid(
                    child("metadata.annotations", BETA_STORAGE_CLASS_ANNOTATION),
                    new_beta,
                    "field is immutable",
                )
            )
        if (
            new_spec.storage_class_name is not None
            and old_spec.storage_class_name is None
            and (old_beta is None or new_spec.storage_class_name == old_beta)
        ):  # validateStorageClassUpgradeFromNil
            new_cmp = replace(new_cmp, storage_class_name=None)
    new_requests = dict((new_spec.resources.requests if new_spec.resources else None) or {})
    old_requests = (old_spec.resources.requests if old_spec.resources else None) or {}
    bound = (new.status.phase if new.status else None) == CLAIM_BOUND
    if bound and new_spec.resources and new_spec.resources.requests is not None:
        if STORAGE in old_requests:
            new_requests[STORAGE] = old_requests[STORAGE]
        else:
            new_requests.pop(STORAGE, None)
        new_cmp = replace(new_cmp, resources=replace(new_spec.resources, requests=new_requests))
    new_cmp = replace(new_cmp, volume_attributes_class_name=old_cmp.volume_attributes_class_name)
    if to_dict(new_cmp) != to_dict(old_cmp):
        found.append(
            errors.forbidden("spec", f"{CLAIM_SPEC_IMMUTABLE}\n{_json_diff(old_cmp, new_cmp)}")
        )
    zero = Quantity.from_int(0)
    new_size = ((new_spec.resources.requests if new_spec.resources else None) or {}).get(
        STORAGE, zero
    )
    if new_size < old_requests.get(STORAGE, zero):
        found.append(
            errors.forbidden(
                "spec.resources.requests.storage", "field can not be less than previous value"
            )
        )
    found.extend(validate_immutable(new_spec.volume_mode, old_spec.volume_mode, "volumeMode"))
    if new_spec.volume_attributes_class_name != old_spec.volume_attributes_class_name:
        found.append(
            errors.forbidden(
                "spec.volumeAttributesClassName",
                "update is forbidden when the VolumeAttributesClass feature gate is disabled",
            )
        )
    return found


def validate_persistent_volume_claim_status_update(
    new: PersistentVolumeClaim, old: PersistentVolumeClaim
) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimStatusUpdate`` (RecoverVolumeExpansionFailure off)."""
    found: list[FieldError] = []
    if not (new.spec.access_modes if new.spec else None):
        found.append(errors.required("Spec.accessModes", ""))
    capacity = (new.status.capacity if new.status else None) or {}
    for name in sorted(capacity):
        if capacity[name].sign() < 0:
            found.append(
                errors.invalid(
                    key("status.capacity", name),
                    str(capacity[name]),
                    "must be a valid resource quantity",
                )
            )
    return found


# --- StorageClass ------------------------------------------------------------------------------


def _topology_term(
    term: TopologySelectorTerm, path: str
) -> tuple[dict[str, frozenset[str]], list[FieldError]]:
    """``ValidateTopologySelectorTerm``: the term as key -> values, and its errors."""
    found: list[FieldError] = []
    expressions: dict[str, frozenset[str]] = {}
    expr_path = child(path, "matchLabelExpressions")
    for position, requirement in enumerate(term.match_label_expressions or ()):
        req_path = index(expr_path, position)
        values: set[str] = set()
        if not requirement.values:
            found.append(
                errors.required(child(req_path, "values"), "must specify as least one value")
            )
        for value_index, value in enumerate(requirement.values or ()):
            if value in values:
                found.append(errors.duplicate(index(child(req_path, "values"), value_index), value))
            values.add(value)
        found.extend(validate_label_name(requirement.key or "", child(req_path, "key")))
        if (requirement.key or "") in expressions:
            found.append(errors.duplicate(child(req_path, "key"), requirement.key or ""))
        expressions[requirement.key or ""] = frozenset(values)
    return expressions, found


def validate_storage_class(sc: StorageClass) -> list[FieldError]:
    """``ValidateStorageClass`` beyond metadata."""
    found: list[FieldError] = []
    provisioner = sc.provisioner or ""
    if not provisioner:
        found.append(errors.required("provisioner", ""))
    else:
        found.extend(
            errors.invalid("provisioner", provisioner, message)
            for message in selectors.validate_label_key(provisioner.lower())
        )
    parameters = sc.parameters or {}
    if len(parameters) > MAX_PROVISIONER_PARAMETER_LEN:
        found.append(errors.too_long("parameters", MAX_PROVISIONER_PARAMETER_LEN))
    else:
        size = 0
        for name, value in parameters.items():
            if not name:
                found.append(errors.invalid("parameters", name, "field can not be empty."))
            size += len(name) + len(value)
        if size > MAX_PROVISIONER_PARAMETER_SIZE:
            found.append(errors.too_long("parameters", MAX_PROVISIONER_PARAMETER_SIZE))
    if sc.reclaim_policy and sc.reclaim_policy not in STORAGE_CLASS_RECLAIM_POLICIES:
        found.append(
            errors.not_supported("reclaimPolicy", sc.reclaim_policy, STORAGE_CLASS_RECLAIM_POLICIES)
        )
    if sc.volume_binding_mode is None:
        found.append(errors.required("volumeBindingMode", ""))
    elif sc.volume_binding_mode not in BINDING_MODES:
        found.append(
            errors.not_supported("volumeBindingMode", sc.volume_binding_mode, BINDING_MODES)
        )
    seen: list[dict[str, frozenset[str]]] = []
    for position, term in enumerate(sc.allowed_topologies or ()):
        term_path = index("allowedTopologies", position)
        expressions, term_errors = _topology_term(term, term_path)
        found.extend(term_errors)
        if expressions in seen:
            found.append(errors.duplicate(child(term_path, "matchLabelExpressions"), ""))
        seen.append(expressions)
    return found


def validate_storage_class_update(new: StorageClass, old: StorageClass) -> list[FieldError]:
    """``ValidateStorageClassUpdate``: parameters, provisioner, reclaimPolicy and
    volumeBindingMode are immutable (the create rules are not re-run)."""
    found: list[FieldError] = []
    if dict(new.parameters or {}) != dict(old.parameters or {}):
        found.append(errors.forbidden("parameters", "updates to parameters are forbidden."))
    if (new.provisioner or "") != (old.provisioner or ""):
        found.append(errors.forbidden("provisioner", "updates to provisioner are forbidden."))
    if (new.reclaim_policy or "") != (old.reclaim_policy or ""):
        found.append(errors.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    found.extend(
        validate_immutable(new.volume_binding_mode, old.volume_binding_mode, "volumeBindingMode")
    )
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    PersistentVolume: validate_persistent_volume,
    PersistentVolumeClaim: validate_persistent_volume_claim,
    StorageClass: validate_storage_class,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    PersistentVolume: validate_persistent_volume_update,
    PersistentVolumeClaim: validate_persistent_volume_claim_update,
    StorageClass: validate_storage_class_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    PersistentVolume: validate_persistent_volume_status_update,
    PersistentVolumeClaim: validate_persistent_volume_claim_status_update,
}
