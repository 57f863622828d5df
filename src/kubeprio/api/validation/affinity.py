"""Validation of a pod's scheduling constraints: node selector and affinity, pod
(anti-)affinity, tolerations and topology spread constraints.

Mirrors ``ValidateNodeSelector*``, ``validateAffinity`` (and the pod-affinity term
checks), ``ValidateTolerations``, ``validateTaintEffect`` and
``validateTopologySpreadConstraints`` in ``pkg/apis/core/validation/validation.go``.
Upstream quirks kept: pod-affinity namespace names are reported at ``...namespace``
(singular); an empty ``topologyKey`` gets both *Required* and the qualified-name
errors. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors, selectors
from kubeprio.api.core import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    Toleration,
    TopologySpreadConstraint,
)
from kubeprio.api.errors import FieldError
from kubeprio.api.meta import LabelSelector
from kubeprio.api.validation.meta import (
    EXISTS_NO_VALUES,
    IN_NOT_IN_VALUES,
    NOT_A_VALID_OPERATOR,
    child,
    dns1123_label_errors,
    index,
    name_is_dns_subdomain,
    validate_label_name,
    validate_label_selector,
)

NOT_POSITIVE: Final = "must be greater than zero"
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")


def validate_node_selector_requirement(
    requirement: NodeSelectorRequirement, path: str, *, allow_invalid_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement`` (a label expression of node affinity)."""
    found: list[FieldError] = []
    values = requirement.values or ()
    operator = requirement.operator or ""
    if operator in ("In", "NotIn"):
        if not values:
            found.append(errors.required(child(path, "values"), IN_NOT_IN_VALUES))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            found.append(errors.forbidden(child(path, "values"), EXISTS_NO_VALUES))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            found.append(
                errors.required(
                    child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        found.append(errors.invalid(child(path, "operator"), operator, NOT_A_VALID_OPERATOR))
    found.extend(validate_label_name(requirement.key or "", child(path, "key")))
    if not allow_invalid_value:
        for position, value in enumerate(values):
            found.extend(
                errors.invalid(index(child(path, "values"), position), value, m)
                for m in selectors.validate_label_value(value)
            )
    return found


def validate_node_field_requirement(
    requirement: NodeSelectorRequirement, path: str
) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one value."""
    found: list[FieldError] = []
    values = requirement.values or ()
    if requirement.operator in ("In", "NotIn"):
        if len(values) != 1:
            found.append(
                errors.required(
                    child(path, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        found.append(
            errors.invalid(
                child(path, "operator"), requirement.operator or "", NOT_A_VALID_OPERATOR
            )
        )
    if requirement.key != "metadata.name":
        found.append(
            errors.invalid(
                child(path, "key"), requirement.key or "", "not a valid field selector key"
            )
        )
    else:
        for position, value in enumerate(values):
            found.extend(
                errors.invalid(index(child(path, "values"), position), value, m)
                for m in name_is_dns_subdomain(value)
            )
    return found


def validate_node_selector_term(
    term: NodeSelectorTerm, path: str, *, allow_invalid_value: bool = False
) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``."""
    found: list[FieldError] = []
    for position, requirement in enumerate(term.match_expressions or ()):
        found.extend(
            validate_node_selector_requirement(
                requirement,
                index(child(path, "matchExpressions"), position),
                allow_invalid_value=allow_invalid_value,
            )
        )
    for position, requirement in enumerate(term.match_fields or ()):
        found.extend(
            validate_node_field_requirement(
                requirement, index(child(path, "matchFields"), position)
            )
        )
    return found


def validate_node_selector(selector: NodeSelector, path: str) -> list[FieldError]:
    """``ValidateNodeSelector``: at least one term."""
    terms_path = child(path, "nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [errors.required(terms_path, "must have at least one node selector term")]
    found: list[FieldError] = []
    for position, term in enumerate(selector.node_selector_terms):
        found.extend(validate_node_selector_term(term, index(terms_path, position)))
    return found


def _validate_node_affinity(affinity: NodeAffinity, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    required = affinity.required_during_scheduling_ignored_during_execution
    if required is not None:
        found.extend(
            validate_node_selector(
                required, child(path, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        )
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for position, term in enumerate(
        affinity.preferred_during_scheduling_ignored_during_execution or ()
    ):
        term_path = index(preferred_path, position)
        weight = term.weight or 0
        if not 1 <= weight <= 100:
            found.append(
                errors.invalid(child(term_path, "weight"), weight, "must be in the range 1-100")
            )
        # Preferred terms may name label values that exist on no node.
        found.extend(
            validate_node_selector_term(
                term.preference or NodeSelectorTerm(),
                child(term_path, "preference"),
                allow_invalid_value=True,
            )
        )
    return found


def _validate_label_keys(
    keys: Sequence[str] | None, selector: LabelSelector | None, path: str
) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [errors.forbidden(path, "must not be specified when labelSelector is not set")]
    found: list[FieldError] = []
    for position, label_key in enumerate(keys):
        found.extend(validate_label_name(label_key, index(path, position)))
    return found


def _validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> list[FieldError]:
    """``validatePodAffinityTerm``."""
    found = validate_label_selector(term.label_selector, child(path, "labelSelector"))
    found.extend(validate_label_selector(term.namespace_selector, child(path, "namespaceSelector")))
    for namespace in term.namespaces or ():
        found.extend(
            errors.invalid(child(path, "namespace"), namespace, m)
            for m in dns1123_label_errors(namespace)
        )
    match_keys = term.match_label_keys or ()
    found.extend(
        _validate_label_keys(match_keys, term.label_selector, child(path, "matchLabelKeys"))
    )
    found.extend(
        _validate_label_keys(
            term.mismatch_label_keys, term.label_selector, child(path, "mismatchLabelKeys")
        )
    )
    if term.label_selector is not None:
        positions = {label_key: i for i, label_key in enumerate(match_keys)}
        selector_keys = set(term.label_selector.match_labels or {})
        for requirement in term.label_selector.match_expressions or ():
            req_key = requirement.key or ""
            if req_key in positions and req_key in selector_keys:
                found.append(
                    errors.invalid(
                        index(path, positions[req_key]),
                        req_key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
                )
            selector_keys.add(req_key)
    mismatch = set(term.mismatch_label_keys or ())
    for position, label_key in enumerate(match_keys):
        if label_key in mismatch:
            found.append(
                errors.invalid(
                    index(child(path, "matchLabelKeys"), position),
                    label_key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    if not term.topology_key:
        found.append(errors.required(child(path, "topologyKey"), "can not be empty"))
    found.extend(validate_label_name(term.topology_key or "", child(path, "topologyKey")))
    return found


def _validate_pod_affinity(affinity: PodAffinity, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for position, term in enumerate(
        affinity.required_during_scheduling_ignored_during_execution or ()
    ):
        found.extend(_validate_pod_affinity_term(term, index(required_path, position)))
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for position, weighted in enumerate(
        affinity.preferred_during_scheduling_ignored_during_execution or ()
    ):
        term_path = index(preferred_path, position)
        weight = weighted.weight or 0
        if not 1 <= weight <= 100:
            found.append(
                errors.invalid(child(term_path, "weight"), weight, "must be in the range 1-100")
            )
        found.extend(
            _validate_pod_affinity_term(
                weighted.pod_affinity_term or PodAffinityTerm(), child(term_path, "podAffinityTerm")
            )
        )
    return found


def validate_affinity(affinity: Affinity | None, path: str) -> list[FieldError]:
    """``validateAffinity``: node affinity, pod affinity and pod anti-affinity."""
    if affinity is None:
        return []
    found: list[FieldError] = []
    if affinity.node_affinity is not None:
        found.extend(_validate_node_affinity(affinity.node_affinity, child(path, "nodeAffinity")))
    if affinity.pod_affinity is not None:
        found.extend(_validate_pod_affinity(affinity.pod_affinity, child(path, "podAffinity")))
    if affinity.pod_anti_affinity is not None:
        found.extend(
            _validate_pod_affinity(affinity.pod_anti_affinity, child(path, "podAntiAffinity"))
        )
    return found


def validate_taint_effect(effect: str, path: str, *, allow_empty: bool) -> list[FieldError]:
    """``validateTaintEffect``: NoSchedule, PreferNoSchedule or NoExecute."""
    if not effect and not allow_empty:
        return [errors.required(path, "")]
    if effect not in TAINT_EFFECTS:
        return [errors.not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: Sequence[Toleration] | None, path: str) -> list[FieldError]:
    """``ValidateTolerations``."""
    found: list[FieldError] = []
    for position, toleration in enumerate(tolerations or ()):
        item = index(path, position)
        toleration_key = toleration.key or ""
        operator = toleration.operator or ""
        value = toleration.value or ""
        effect = toleration.effect or ""
        if toleration_key:
            found.extend(validate_label_name(toleration_key, child(item, "key")))
        if not toleration_key and operator != "Exists":
            found.append(
                errors.invalid(
                    child(item, "operator"),
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if toleration.toleration_seconds is not None and effect != "NoExecute":
            found.append(
                errors.invalid(
                    child(item, "effect"),
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            messages = selectors.validate_label_value(value)
            if messages:
                found.append(errors.invalid(child(item, "operator"), value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                found.append(
                    errors.invalid(
                        child(item, "operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            found.append(
                errors.not_supported(child(item, "operator"), operator, ("Equal", "Exists"))
            )
        if effect:
            found.extend(validate_taint_effect(effect, child(item, "effect"), allow_empty=True))
    return found


def validate_topology_spread_constraints(
    constraints: Sequence[TopologySpreadConstraint] | None, path: str
) -> list[FieldError]:
    """``validateTopologySpreadConstraints``."""
    found: list[FieldError] = []
    constraints = constraints or ()
    for position, constraint in enumerate(constraints):
        item = index(path, position)
        max_skew = constraint.max_skew or 0
        if max_skew <= 0:
            found.append(errors.invalid(child(item, "maxSkew"), max_skew, NOT_POSITIVE))
        if not constraint.topology_key:
            found.append(errors.required(child(item, "topologyKey"), "can not be empty"))
        action = constraint.when_unsatisfiable or ""
        if action not in WHEN_UNSATISFIABLE:
            found.append(
                errors.not_supported(child(item, "whenUnsatisfiable"), action, WHEN_UNSATISFIABLE)
            )
        for later in constraints[position + 1 :]:
            if (
                later.topology_key == constraint.topology_key
                and later.when_unsatisfiable == constraint.when_unsatisfiable
            ):
                found.append(
                    errors.duplicate(
                        child(item, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{constraint.topology_key or ''}, {action}}}",
                    )
                )
                break
        if constraint.min_domains is not None:
            if constraint.min_domains <= 0:
                found.append(
                    errors.invalid(child(item, "minDomains"), constraint.min_domains, NOT_POSITIVE)
                )
            if action != "DoNotSchedule":
                found.append(
                    errors.invalid(
                        child(item, "minDomains"),
                        constraint.min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for attr, json_key in (
            ("node_affinity_policy", "nodeAffinityPolicy"),
            ("node_taints_policy", "nodeTaintsPolicy"),
        ):
            policy = getattr(constraint, attr)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                found.append(
                    errors.not_supported(child(item, json_key), policy, NODE_INCLUSION_POLICIES)
                )
        found.extend(_validate_spread_match_label_keys(constraint, child(item, "matchLabelKeys")))
        found.extend(
            validate_label_selector(constraint.label_selector, child(item, "labelSelector"))
        )
    return found


def _validate_spread_match_label_keys(
    constraint: TopologySpreadConstraint, path: str
) -> list[FieldError]:
    keys = constraint.match_label_keys or ()
    if not keys:
        return []
    found: list[FieldError] = []
    selector = constraint.label_selector
    selector_keys: set[str] = set()
    if selector is not None:
        selector_keys.update(selector.match_labels or {})
        selector_keys.update(r.key or "" for r in selector.match_expressions or ())
    else:
        found.append(errors.forbidden(path, "must not be specified when labelSelector is not set"))
    for position, label_key in enumerate(keys):
        found.extend(validate_label_name(label_key, index(path, position)))
        if label_key in selector_keys:
            found.append(
                errors.invalid(
                    index(path, position),
                    label_key,
                    "exists in both matchLabelKeys and labelSelector",
                )
            )
    return found
