"""The ``scale`` subresource: an autoscaling/v1 ``Scale`` view of any scalable workload.

Upstream's ``ScaleREST`` of each workload registry (``pkg/registry/apps/deployment``,
``replicaset``, ``statefulset`` storage: ``scaleFromDeployment`` and friends): a GET
answers the workload's ``spec.replicas``, ``status.replicas`` and its selector as a string;
a PUT (or PATCH, applied to that view) sets ``spec.replicas`` through the workload's
normal update path, with the Scale's ``resourceVersion`` as a precondition and
``ValidateScale``'s ``spec.replicas`` rule. Generic over the kind: any row of the resource
table with a ``scale`` subresource whose model has ``spec.replicas``, ``spec.selector`` and
``status.replicas`` (Deployment, ReplicaSet, StatefulSet, and ReplicationController, whose
selector is a label map: ``pkg/registry/core/replicationcontroller/storage``'s
``scaleFromRC``) is served the same way. ``patched_scale`` applies a PATCH to a Scale
view, the built-in kinds' and the custom resources' (``apiserver.crscale``) alike.

Admission sees the write as one of the Scale, not of the workload
(``apiserver.scaleadmission``).

Who drives it: ``ApiService.get_scale``/``update_scale`` (the HPA controller through the
``Client`` protocol) and ``apiserver.rest`` (HTTP). Pure functions of their arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeprio.api import errors
from kubeprio.api.apps import Scale, ScaleSpec, ScaleStatus
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.patch import PatchError, apply_patch
from kubeprio.api.replicationcontroller import selector_as_label_selector
from kubeprio.api.serialization import DecodeError, from_dict, to_dict
from kubeprio.apiserver import status, tableformat
from kubeprio.apiserver.restdecoding import parse_json, patch_type_of
from kubeprio.apiserver.restmessages import RestRequest


def check_scalable(info: ResourceInfo) -> None:
    """404 for a kind without a ``scale`` subresource (upstream has no route for it)."""
    if not info.has_subresource("scale"):
        raise status.path_not_found()


def scale_of(obj: Any) -> Scale:
    """The ``Scale`` view of a workload (``scaleFromDeployment`` upstream)."""
    spec = obj.spec
    selector = ""
    label_selector = spec.selector if spec is not None else None
    if isinstance(label_selector, Mapping):
        # A ReplicationController's map (``scaleFromRC``: ``SelectorFromSet(...).String()``).
        label_selector = selector_as_label_selector(label_selector)
    if label_selector is not None:
        selector = tableformat.selector_string(label_selector)
        if selector == tableformat.NONE:
            selector = ""
    metadata = obj.metadata
    return Scale(
        metadata=ObjectMeta(
            name=metadata.name,
            namespace=metadata.namespace,
            uid=metadata.uid,
            resource_version=metadata.resource_version,
            creation_timestamp=metadata.creation_timestamp,
        ),
        # autoscaling/v1: spec.replicas and status.selector are omitempty (an empty
        # value is left out); status.replicas is always written.
        spec=ScaleSpec(replicas=(spec.replicas if spec else None) or None),
        status=ScaleStatus(
            replicas=(obj.status.replicas if obj.status else None) or 0, selector=selector or None
        ),
    )


def check_replicas(scale: Scale, name: str) -> None:
    """Upstream's ``ValidateScale``: a negative count is refused."""
    replicas = scale.spec.replicas if scale.spec else None
    if replicas is not None and replicas < 0:
        raise errors.invalid_error(
            "Scale",
            "autoscaling",
            name,
            [errors.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )


def scaled(current: Any, scale: Scale) -> Any:
    """``current`` with the Scale's replicas (and its resourceVersion as a precondition),
    for a Scale ``check_replicas`` accepted."""
    replicas = scale.spec.replicas if scale.spec else None
    metadata = current.metadata
    requested_rv = scale.metadata.resource_version
    if requested_rv:
        metadata = evolve(metadata, resource_version=requested_rv)
    return evolve(current, spec=evolve(current.spec, replicas=replicas or 0), metadata=metadata)


def patched_scale(request: RestRequest, current: Scale) -> tuple[Scale, list[str]]:
    """A PATCH of the Scale view (JSON, merge or strategic merge: a Scale is typed)."""
    body, _ = parse_json(request.body)
    try:
        patched = apply_patch(
            to_dict(current), body, patch_type=patch_type_of(request), kind="Scale"
        )
        new_scale = from_dict(Scale, patched)
    except PatchError as exc:
        raise errors.bad_request(str(exc)) from exc
    except DecodeError as exc:
        raise errors.bad_request(
            f'Scale in version "v1" cannot be handled as a Scale: {exc.message}'
        ) from exc
    assert isinstance(new_scale, Scale)
    return new_scale, []
