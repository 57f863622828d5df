"""Validation of the core/v1 kinds: Pod, Node, Namespace, Event, Binding.

Mirrors ``pkg/apis/core/validation/validation.go`` (``ValidatePodCreate``,
``ValidatePodUpdate``, ``ValidatePodStatusUpdate``, ``ValidateNode``,
``ValidateNodeUpdate``, ``ValidateNamespace*``, ``ValidatePodBinding``) and
``pkg/apis/core/validation/events.go`` (``legacyValidateEvent``, what the core/v1 Event
API runs). The pod-spec rules shared with workload templates live in
``validation.podspec``.

A pod's spec is immutable except for container images, ``activeDeadlineSeconds``
(only lowered), added tolerations and a grace period raised from negative to 1. Any
other change gets upstream's single *Forbidden* on ``spec`` whose text lists the
updatable fields and then a diff. Upstream prints that diff with go-cmp over its
internal types, which cannot be reproduced byte for byte; we print the changed
top-level fields in go-cmp's layout (``- \\tField: old`` / ``+ \\tField: new``) with JSON
values, so everything up to the diff matches exactly.

Kept upstream quirks: node taint errors are reported under ``metadata.taints``; node
capacity errors under ``status.capacity.<name>``; pod condition type errors under
``metadata.conditions[i].Type``; namespace phase errors under ``status.Phase``.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.core import (
    Binding,
    Container,
    Event,
    Namespace,
    Node,
    NodeSpec,
    Pod,
    PodSpec,
    Taint,
    Toleration,
)
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoPointer, GoStruct
from kubeprio.api.model import INT32_MAX, evolve
from kubeprio.api.quantity import Quantity
from kubeprio.api.serialization import to_sparse_dict
from kubeprio.api.validation.affinity import validate_taint_effect, validate_tolerations
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    child,
    dns1123_subdomain_errors,
    index,
    name_is_dns_subdomain,
    qualified_name_errors,
    validate_immutable,
    validate_label_name,
)
from kubeprio.api.validation.podspec import (
    image_whitespace_errors,
    pod_spec_warnings,
    validate_pod_spec,
)
from kubeprio.api.validation.resources import validate_resource_quantity

UPDATABLE_POD_SPEC_FIELDS: Final = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
POD_UPDATE_FORBIDDEN: Final = "pod updates may not change fields other than " + ",".join(
    UPDATABLE_POD_SPEC_FIELDS
)
"""The head of upstream's pod-update error; the diff follows on the next line."""
SYSTEM_POD_CONDITIONS: Final = frozenset({"PodScheduled", "Ready", "Initialized"})


# --- pods ---------------------------------------------------------------------------------------


def _image_whitespace(containers: Sequence[Container] | None, path: str) -> list[FieldError]:
    """``validateContainersOnlyForPod``: a pod's image may not be padded with spaces."""
    found: list[FieldError] = []
    for i, container in enumerate(containers or ()):
        found.extend(image_whitespace_errors(container.image, child(index(path, i), "image")))
    return found


def validate_pod_metadata_and_spec(pod: Pod) -> list[FieldError]:
    """``validatePodMetadataAndSpec`` after ``ValidateObjectMeta`` (run by the caller)."""
    spec = pod.spec or PodSpec()
    found = validate_pod_spec(spec, "spec", is_pod=True, pod_name=pod.metadata.name)
    found.extend(_image_whitespace(spec.containers, "spec.containers"))
    found.extend(_image_whitespace(spec.init_containers, "spec.initContainers"))
    return found


def validate_pod(pod: Pod) -> list[FieldError]:
    """``ValidatePodCreate`` (metadata is checked by the caller)."""
    spec = pod.spec or PodSpec()
    found = validate_pod_metadata_and_spec(pod)
    if spec.ephemeral_containers:
        # Only the ephemeralcontainers subresource adds them.
        found.append(errors.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.node_name and spec.extra.get("schedulingGates"):
        found.append(
            errors.forbidden(
                "spec.nodeName", "cannot be set until all schedulingGates have been cleared"
            )
        )
    return found


def _container_updates(
    new: Sequence[Container] | None, old: Sequence[Container] | None, path: str
) -> tuple[list[FieldError], bool]:
    """``ValidateContainerUpdates``: same number of containers, each with an image."""
    new, old = new or (), old or ()
    if len(new) != len(old):
        return [errors.forbidden(path, "pod updates may not add or remove containers")], True
    found: list[FieldError] = []
    for position, container in enumerate(new):
        image_path = child(index(path, position), "image")
        if not container.image:
            found.append(errors.required(image_path, ""))
        else:
            found.extend(image_whitespace_errors(container.image, image_path))
    return found, False


def _only_added_tolerations(
    new: Sequence[Toleration] | None, old: Sequence[Toleration] | None, path: str
) -> list[FieldError]:
    """``validateOnlyAddedTolerations``: existing tolerations may change only tolerationSeconds."""
    for existing in old or ():
        if not any(
            evolve(existing, toleration_seconds=t.toleration_seconds) == t for t in new or ()
        ):
            return [
                errors.forbidden(
                    path, "existing toleration can not be modified except its tolerationSeconds"
                )
            ]
    return validate_tolerations(new, path)


def _prune(value: Any) -> Any:
    """Drop nulls and empty lists/maps: upstream's semantic equality treats them as unset."""
    if isinstance(value, dict):
        pruned = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _go_field(json_key: str) -> str:
    return json_key[:1].upper() + json_key[1:]


def spec_diff(old: Any, new: Any, type_name: str = "core.PodSpec") -> str:
    """A go-cmp-style diff of two models (pod specs), one line per changed top-level field."""
    old_doc, new_doc = _prune(to_sparse_dict(old)), _prune(to_sparse_dict(new))
    keys = list(old_doc) + [k for k in new_doc if k not in old_doc]
    lines = [f"  {type_name}{{"]
    identical = 0
    for json_key in keys:
        if old_doc.get(json_key) == new_doc.get(json_key):
            identical += 1
            continue
        if identical:
            lines.append(f"  \t... // {identical} identical fields")
            identical = 0
        name = _go_field(json_key)
        if json_key in old_doc:
            lines.append(f"- \t{name}: {errors.go_json(old_doc[json_key])},")
        if json_key in new_doc:
            lines.append(f"+ \t{name}: {errors.go_json(new_doc[json_key])},")
    if identical:
        lines.append(f"  \t... // {identical} identical fields")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, tuple | list | dict | Mapping) and not value)


def semantic_equal(a: Any, b: Any) -> bool:
    """``apiequality.Semantic.DeepEqual``: quantities by value, nil equal to empty."""
    if a == b or (_empty(a) and _empty(b)):
        return True
    if isinstance(a, Quantity) or isinstance(b, Quantity):
        return False  # Quantity equality is by value already
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return all(
            semantic_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = set(a) | set(b)
        return all(semantic_equal(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_spec(a: PodSpec, b: PodSpec) -> bool:
    return a == b or semantic_equal(a, b)


def validate_pod_update(new: Pod, old: Pod) -> list[FieldError]:
    """``ValidatePodUpdate`` (metadata update rules are checked by the caller)."""
    new_spec, old_spec = new.spec or PodSpec(), old.spec or PodSpec()
    found = validate_pod_metadata_and_spec(new)
    errs, stop = _container_updates(new_spec.containers, old_spec.containers, "spec.containers")
    found.extend(errs)
    if stop:
        return found
    errs, stop = _container_updates(
        new_spec.init_containers, old_spec.init_containers, "spec.initContainers"
    )
    found.extend(errs)
    if stop:
        return found
    deadline, old_deadline = new_spec.active_deadline_seconds, old_spec.active_deadline_seconds
    if deadline is not None:
        if deadline < 0 or deadline > INT32_MAX:
            found.append(
                errors.invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    f"must be between 0 and {INT32_MAX}, inclusive",
                )
            )
            return found
        if old_deadline is not None and old_deadline < deadline:
            found.append(
                errors.invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    "must be less than or equal to previous value",
                )
            )
            return found
    elif old_deadline is not None:
        found.append(
            errors.invalid(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )
    found.extend(
        _only_added_tolerations(new_spec.tolerations, old_spec.tolerations, "spec.tolerations")
    )
    if _same_spec(new_spec, old_spec):
        return found
    munged = _munge_updatable(new_spec, old_spec)
    if not _same_spec(munged, old_spec):
        detail = f"{POD_UPDATE_FORBIDDEN}\n{spec_diff(old_spec, munged)}"
        found.append(errors.forbidden("spec", detail))
    return found


def _munge_updatable(new: PodSpec, old: PodSpec) -> PodSpec:
    """Copy the updatable fields from ``old`` into ``new``, so that only forbidden changes remain."""
    containers = tuple(
        evolve(c, image=o.image)
        for c, o in zip(new.containers or (), old.containers or (), strict=True)
    )
    init_containers = tuple(
        evolve(c, image=o.image)
        for c, o in zip(new.init_containers or (), old.init_containers or (), strict=True)
    )
    extra = dict(new.extra)
    for json_key in ("schedulingGates",):
        if json_key in old.extra:
            extra[json_key] = old.extra[json_key]
        else:
            extra.pop(json_key, None)
    grace = new.termination_grace_period_seconds
    old_grace = old.termination_grace_period_seconds
    if old_grace is not None and old_grace < 0 and grace == 1:
        grace = old_grace
    node_selector = new.node_selector
    if old.extra.get("schedulingGates") and _only_additions(new.node_selector, old.node_selector):
        # A gated pod may gain node selector entries (KEP-3838 mutable scheduling directives).
        node_selector = old.node_selector
    return evolve(
        new,
        containers=containers if new.containers is not None else None,
        init_containers=init_containers if new.init_containers is not None else None,
        active_deadline_seconds=old.active_deadline_seconds,
        tolerations=old.tolerations,
        termination_grace_period_seconds=grace,
        node_selector=node_selector,
        extra=extra,
    )


def _only_additions(new: Any, old: Any) -> bool:
    new, old = dict(new or {}), dict(old or {})
    return all(new.get(k) == v for k, v in old.items())


def validate_pod_status_update(new: Pod, old: Pod) -> list[FieldError]:
    """``ValidatePodStatusUpdate`` for the modelled status fields."""
    found: list[FieldError] = []
    status, old_status = new.status, old.status
    for position, condition in enumerate((status.conditions if status else None) or ()):
        condition_type = condition.type or ""
        # Every status write checks every condition: a valid type (the memoised common
        # case) costs no path text.
        if condition_type in SYSTEM_POD_CONDITIONS or not selectors.validate_label_key(
            condition_type
        ):
            continue
        # Upstream builds this path from "metadata", so it reads metadata.conditions[i].Type.
        found.extend(qualified_name_errors(condition_type, f"metadata.conditions[{position}].Type"))
    if (new.spec.node_name if new.spec else None) != (old.spec.node_name if old.spec else None):
        found.append(errors.forbidden("status.nodeName", "may not be changed directly"))
    nominated = (status.nominated_node_name if status else None) or ""
    old_nominated = (old_status.nominated_node_name if old_status else None) or ""
    if nominated and nominated != old_nominated:
        found.extend(
            errors.invalid("status.nominatedNodeName", nominated, m)
            for m in name_is_dns_subdomain(nominated)
        )
    found.extend(
        validate_immutable(
            (status.qos_class if status else None) or "",
            (old_status.qos_class if old_status else None) or "",
            "status.qosClass",
        )
    )
    return found


def pod_warnings(pod: Pod) -> list[str]:
    """Warnings returned with a pod write (part of upstream ``GetWarningsForPod``)."""
    return pod_spec_warnings(pod.spec or PodSpec(), "spec")


# --- nodes --------------------------------------------------------------------------------------


def _taint_value(taint: Taint) -> GoValue:
    """The internal ``core.Taint`` as ``%#v`` prints it; with ``timeAdded`` set (a pointer,
    printed as an address) its ``json.Marshal`` form (no json tags: Go field names)."""
    fields = {
        "Key": taint.key or "",
        "Value": taint.value or "",
        "Effect": taint.effect or "",
        "TimeAdded": taint.time_added,
    }
    typed = GoStruct(
        "core.Taint",
        (
            ("Key", fields["Key"]),
            ("Value", fields["Value"]),
            ("Effect", fields["Effect"]),
            ("TimeAdded", GoPointer("*v1.Time", taint.time_added)),
        ),
    )
    return errors.go_value(typed, fields)


def validate_node_taints(taints: Sequence[Taint] | None, path: str) -> list[FieldError]:
    """``validateNodeTaints``: key, value and effect valid; unique by key and effect."""
    found: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for position, taint in enumerate(taints or ()):
        item = index(path, position)
        found.extend(validate_label_name(taint.key or "", child(item, "key")))
        messages = selectors.validate_label_value(taint.value or "")
        if messages:
            found.append(
                errors.invalid(child(item, "value"), taint.value or "", ";".join(messages))
            )
        found.extend(
            validate_taint_effect(taint.effect or "", child(item, "effect"), allow_empty=False)
        )
        signature = (taint.effect or "", taint.key or "")
        if signature in seen:
            found.append(
                FieldError(
                    errors.ErrorType.DUPLICATE,
                    item,
                    _taint_value(taint),
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add(signature)
    return found


def _node_resources(node: Node) -> list[FieldError]:
    """``ValidateNodeResources``: capacity and allocatable quantities valid."""
    found: list[FieldError] = []
    status = node.status
    for attr in ("capacity", "allocatable"):
        resources = (getattr(status, attr) if status else None) or {}
        for name in sorted(resources):
            found.extend(validate_resource_quantity(name, resources[name], f"status.{attr}.{name}"))
    return found


def validate_node(node: Node) -> list[FieldError]:
    """``ValidateNode`` (metadata is checked by the caller)."""
    found: list[FieldError] = []
    if node.spec and node.spec.taints:
        # Upstream passes the metadata path here, hence "metadata.taints".
        found.extend(validate_node_taints(node.spec.taints, "metadata.taints"))
    found.extend(_node_resources(node))
    return found


def _pod_cidrs(spec: NodeSpec | None) -> list[object]:
    """A Node's ``spec.podCIDRs`` (its ``podCIDR`` alone when the list is absent: the
    two are kept in step, ``api.defaults``)."""
    if spec is None:
        return []
    listed = spec.extra.get("podCIDRs")
    if isinstance(listed, list):
        return listed
    return [spec.pod_cidr] if spec.pod_cidr else []


def validate_node_update(new: Node, old: Node) -> list[FieldError]:
    """``ValidateNodeUpdate``: podCIDR and providerID set once; addresses unique; taints valid."""
    found = _node_resources(new)
    seen: set[tuple[str, str]] = set()
    for position, address in enumerate((new.status.addresses if new.status else None) or ()):
        signature = (address.type or "", address.address or "")
        if signature in seen:
            shown = GoStruct(
                "core.NodeAddress", (("Type", signature[0]), ("Address", signature[1]))
            )
            found.append(
                FieldError(errors.ErrorType.DUPLICATE, f"status.addresses[{position}]", shown)
            )
        seen.add(signature)
    old_spec, new_spec = old.spec, new.spec
    old_cidrs, new_cidrs = _pod_cidrs(old_spec), _pod_cidrs(new_spec)
    if old_cidrs:
        # Upstream compares the whole list: one error when its length changed, else one
        # per entry that changed.
        changed = (
            1
            if len(old_cidrs) != len(new_cidrs)
            else sum(a != b for a, b in zip(old_cidrs, new_cidrs, strict=True))
        )
        found.extend(
            errors.forbidden(
                "spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'
            )
            for _ in range(changed)
        )
    old_provider = (old_spec.provider_id if old_spec else None) or ""
    if old_provider and old_provider != ((new_spec.provider_id if new_spec else None) or ""):
        found.append(
            errors.forbidden(
                "spec.providerID", 'node updates may not change providerID except from "" to valid'
            )
        )
    if new_spec and new_spec.taints:
        found.extend(validate_node_taints(new_spec.taints, "metadata.taints"))
    return found


# --- namespaces, events, bindings --------------------------------------------------------------------


def validate_namespace(namespace: Namespace) -> list[FieldError]:
    """``ValidateNamespace``: finalizer names are qualified or standard (``kubernetes``)."""
    found: list[FieldError] = []
    finalizers = (namespace.spec or {}).get("finalizers") or []
    for finalizer in finalizers if isinstance(finalizers, list) else []:
        if not isinstance(finalizer, str):
            continue
        found.extend(qualified_name_errors(finalizer, "spec.finalizers"))
        if "/" not in finalizer and finalizer != "kubernetes":
            found.append(
                errors.invalid(
                    "spec.finalizers",
                    finalizer,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return found


def validate_namespace_update(new: Namespace, old: Namespace) -> list[FieldError]:
    """``ValidateNamespaceUpdate``: only the metadata rules (checked by the caller)."""
    return []


def validate_namespace_status_update(new: Namespace, old: Namespace) -> list[FieldError]:
    """``ValidateNamespaceStatusUpdate``: Active unless being deleted, then Terminating."""
    phase = (new.status.phase if new.status else None) or ""
    if not new.metadata.deletion_timestamp:
        if phase != "Active":
            return [
                errors.invalid(
                    "status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"
                )
            ]
    elif phase != "Terminating":
        return [
            errors.invalid(
                "status.Phase",
                phase,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        ]
    return []


def validate_event(event: Event) -> list[FieldError]:
    """What the core/v1 Event API checks: a name (no other object-metadata rules) and
    ``legacyValidateEvent``."""
    found: list[FieldError] = []
    if not event.metadata.name:
        found.append(errors.required("metadata.name", "name or generateName is required"))
    found.extend(legacy_event_rules(event))
    return found


def legacy_event_rules(event: Event) -> list[FieldError]:
    """``legacyValidateEvent``: the rules every Event write passes, whichever API it came
    through (events.k8s.io/v1 adds its own, ``validation.events``)."""
    found: list[FieldError] = []
    namespace = event.metadata.namespace or ""
    involved = event.involved_object
    involved_namespace = (involved.namespace if involved else None) or ""
    if not event.event_time:
        if not involved_namespace:
            if namespace not in ("", "default"):
                found.append(
                    errors.invalid(
                        "involvedObject.namespace",
                        involved_namespace,
                        "does not match event.namespace",
                    )
                )
        elif namespace != involved_namespace:
            found.append(
                errors.invalid(
                    "involvedObject.namespace", involved_namespace, "does not match event.namespace"
                )
            )
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            found.append(
                errors.invalid(
                    "involvedObject.namespace", involved_namespace, "does not match event.namespace"
                )
            )
        controller = event.reporting_component or ""
        if not controller:
            found.append(errors.required("reportingController", ""))
        found.extend(qualified_name_errors(controller, "reportingController"))
        instance = event.reporting_instance or ""
        if not instance:
            found.append(errors.required("reportingInstance", ""))
        if len(instance) > 128:
            found.append(errors.invalid("reportingInstance", "", "can have at most 128 characters"))
        action = event.action or ""
        if not action:
            found.append(errors.required("action", ""))
        if len(action) > 128:
            found.append(errors.invalid("action", "", "can have at most 128 characters"))
        reason = event.reason or ""
        if not reason:
            found.append(errors.required("reason", ""))
        if len(reason) > 128:
            found.append(errors.invalid("reason", "", "can have at most 128 characters"))
        if len(event.message or "") > 1024:
            found.append(errors.invalid("message", "", "can have at most 1024 characters"))
    found.extend(
        errors.invalid("namespace", namespace, m) for m in dns1123_subdomain_errors(namespace)
    )
    return found


def validate_event_update(new: Event, old: Event) -> list[FieldError]:
    """``ValidateEventUpdate`` for core/v1: the legacy rules on the new event."""
    return validate_event(new)


def validate_binding(binding: Binding) -> list[FieldError]:
    """``ValidatePodBinding``: the target is a Node (kind empty or ``Node``) with a name."""
    found: list[FieldError] = []
    target = binding.target
    kind = (target.kind if target else None) or ""
    if kind and kind != "Node":
        found.append(errors.not_supported("target.kind", kind, ("Node", "<empty>")))
    if not (target.name if target else None):
        found.append(errors.required("target.name", ""))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    Pod: validate_pod,
    Node: validate_node,
    Namespace: validate_namespace,
    Event: validate_event,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Pod: validate_pod_update,
    Node: validate_node_update,
    Namespace: validate_namespace_update,
    Event: validate_event_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Pod: validate_pod_status_update,
    Namespace: validate_namespace_status_update,
}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {Pod: pod_warnings}
