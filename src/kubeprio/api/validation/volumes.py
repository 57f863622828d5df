"""Validation of a pod spec's ``volumes`` (kept as JSON in ``spec.extra``).

Mirrors upstream v1.32 ``pkg/apis/core/validation/validation.go``: ``ValidateVolumes``
(a DNS-label name, unique; a ``persistentVolumeClaim`` volume may not name the claim an
``ephemeral`` volume of the same pod creates), ``validateVolumeSource`` (exactly one
source: none is *Required* "must specify a volume type", a second one is *Forbidden* "may
not specify more than 1 volume type" at the later source, in upstream's field order),
``validatePersistentClaimVolumeSource`` (``claimName`` required),
``validateHostPathVolumeSource`` (``path`` required), and for generic ephemeral volumes
``validateEphemeralVolumeSource`` / ``ValidatePersistentVolumeClaimTemplate`` /
``ValidateTemplateObjectMeta`` (``volumeClaimTemplate`` required; its metadata may only
carry labels and annotations; its spec is a claim spec) and the name of the claim the
ephemeral volume controller will create (``<pod>-<volume>``, a DNS subdomain).

The other sources' own fields are not checked. A claim template whose spec does not
decode is reported as *Invalid* at ``spec`` with the decoder's message (upstream refuses
the whole body at decoding). Called by ``validation.podspec``; pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.persistentvolume import PersistentVolumeClaimSpec
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.api.validation.meta import (
    child,
    dns1123_label_errors,
    index,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
)
from kubeprio.api.validation.storage import validate_claim_spec

VOLUME_SOURCES: Final = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
)
"""The JSON keys of ``VolumeSource`` in the order ``validateVolumeSource`` checks them."""

_FORBIDDEN_PATH: Final = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
"""Where upstream's "more than 1 volume type" error names a source differently from its
JSON key (``cephFS``, and the misspelt ``downwarAPI``)."""

MORE_THAN_ONE: Final = "may not specify more than 1 volume type"
NO_TYPE: Final = "must specify a volume type"
CREATED_CLAIM: Final = "must not reference a PVC that gets created for an ephemeral volume"
NOT_FOR_TEMPLATE: Final = "cannot be set for a template"
TEMPLATE_META_FIELDS: Final = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
"""``ObjectMeta``'s fields in struct order (``validateFieldAllowList`` walks them)."""
_TEMPLATE_META_ALLOWED: Final = frozenset({"labels", "annotations"})


def _str_map(value: object) -> Mapping[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): str(v) for k, v in value.items()}


def validate_template_object_meta(meta: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateTemplateObjectMeta``: annotations, labels, and nothing else set."""
    found = validate_annotations(_str_map(meta.get("annotations")), child(path, "annotations"))
    found.extend(validate_labels(_str_map(meta.get("labels")), child(path, "labels")))
    found.extend(
        errors.forbidden(child(path, name), NOT_FOR_TEMPLATE)
        for name in TEMPLATE_META_FIELDS
        if name not in _TEMPLATE_META_ALLOWED and meta.get(name)
    )
    return found


def _claim_template(source: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateEphemeralVolumeSource``."""
    template = source.get("volumeClaimTemplate")
    template_path = child(path, "volumeClaimTemplate")
    if not isinstance(template, Mapping):
        return [errors.required(template_path, "")]
    meta = template.get("metadata")
    found = validate_template_object_meta(
        meta if isinstance(meta, Mapping) else {}, child(template_path, "metadata")
    )
    spec_path = child(template_path, "spec")
    try:
        spec = from_dict(PersistentVolumeClaimSpec, dict(template.get("spec") or {}))
    except DecodeError as exc:
        return [*found, errors.invalid(spec_path, "", exc.message)]
    found.extend(validate_claim_spec(spec, spec_path))
    return found


def _volume_source(
    volume: Mapping[str, Any], path: str, name: str, pod_name: str | None
) -> list[FieldError]:
    """``validateVolumeSource`` for the sources kubeprio checks."""
    found: list[FieldError] = []
    seen = 0
    for source_key in VOLUME_SOURCES:
        source = volume.get(source_key)
        if source is None:
            continue
        if seen:
            found.append(
                errors.forbidden(
                    child(path, _FORBIDDEN_PATH.get(source_key, source_key)), MORE_THAN_ONE
                )
            )
            continue
        seen += 1
        source_path = child(path, source_key)
        body: Mapping[str, Any] = source if isinstance(source, Mapping) else {}
        if source_key == "persistentVolumeClaim" and not body.get("claimName"):
            found.append(errors.required(child(source_path, "claimName"), ""))
        elif source_key == "hostPath" and not body.get("path"):
            found.append(errors.required(child(source_path, "path"), ""))
        elif source_key == "ephemeral":
            found.extend(_claim_template(body, source_path))
            if pod_name and name:
                claim = f"{pod_name}-{name}"
                found.extend(
                    errors.invalid(child(path, "name"), name, f'PVC name "{claim}": {message}')
                    for message in name_is_dns_subdomain(claim)
                )
    if not seen:
        found.append(errors.required(path, NO_TYPE))
    return found


def validate_volumes(volumes: object, path: str, *, pod_name: str | None) -> list[FieldError]:
    """``ValidateVolumes``; ``pod_name`` is the pod's (None or empty for a template)."""
    entries: Sequence[Any] = volumes if isinstance(volumes, list) else ()
    created: set[str] = set()
    if pod_name:
        created = {
            f"{pod_name}-{v.get('name') or ''}"
            for v in entries
            if isinstance(v, Mapping) and v.get("ephemeral") is not None
        }
    found: list[FieldError] = []
    names: set[str] = set()
    for position, volume in enumerate(entries):
        if not isinstance(volume, Mapping):
            continue
        volume_path = index(path, position)
        name_path = child(volume_path, "name")
        name = str(volume.get("name") or "")
        problems = _volume_source(volume, volume_path, name, pod_name)
        if not name:
            problems.append(errors.required(name_path, ""))
        else:
            problems.extend(errors.invalid(name_path, name, m) for m in dns1123_label_errors(name))
        if name in names:
            problems.append(errors.duplicate(name_path, name))
        if problems:
            found.extend(problems)
        else:
            names.add(name)
        claim_source = volume.get("persistentVolumeClaim")
        if isinstance(claim_source, Mapping) and claim_source.get("claimName") in created:
            found.append(
                errors.invalid(
                    child(child(volume_path, "persistentVolumeClaim"), "claimName"),
                    claim_source.get("claimName"),
                    CREATED_CLAIM,
                )
            )
    return found
