"""Defaulting of ValidatingAdmissionPolicies and their Bindings.

Mirrors upstream v1.32 ``pkg/apis/admissionregistration/v1/defaults.go`` and its
generated defaulters: ``SetDefaults_ValidatingAdmissionPolicySpec`` (``failurePolicy:
Fail``), ``SetDefaults_MatchResources`` (``matchPolicy: Equivalent``, empty
``namespaceSelector`` and ``objectSelector``, i.e. match everything) for a policy's
``matchConstraints`` and a binding's ``matchResources`` when present, and
``SetDefaults_Rule`` (``scope: "*"``) for every resource rule and exclusion. A v1
``paramRef`` gets no ``parameterNotFoundAction`` default (only v1alpha1 had one):
validation requires it. Called by ``api.defaults.default_object``; idempotent.
Pure: no I/O.
"""

from __future__ import annotations

from kubeprio.api.admissionpolicy import (
    ALL_SCOPES,
    EQUIVALENT,
    FAIL,
    MatchResources,
    NamedRuleWithOperations,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicySpec,
)
from kubeprio.api.meta import LabelSelector
from kubeprio.api.model import evolve


def _default_rules(
    rules: tuple[NamedRuleWithOperations, ...] | None,
) -> tuple[NamedRuleWithOperations, ...] | None:
    if not rules or all(rule.scope is not None for rule in rules):
        return rules
    return tuple(
        rule if rule.scope is not None else evolve(rule, scope=ALL_SCOPES) for rule in rules
    )


def default_match_resources(match: MatchResources | None) -> MatchResources | None:
    """``SetDefaults_MatchResources`` plus ``SetDefaults_Rule`` of its rules."""
    if match is None:
        return None
    defaulted = evolve(
        match,
        match_policy=match.match_policy if match.match_policy is not None else EQUIVALENT,
        namespace_selector=match.namespace_selector or LabelSelector(),
        object_selector=match.object_selector or LabelSelector(),
        resource_rules=_default_rules(match.resource_rules),
        exclude_resource_rules=_default_rules(match.exclude_resource_rules),
    )
    return match if defaulted == match else defaulted


def default_validating_admission_policy(
    policy: ValidatingAdmissionPolicy,
) -> ValidatingAdmissionPolicy:
    """A policy's spec defaults (an absent spec is an empty one, Go's zero struct)."""
    spec = policy.spec or ValidatingAdmissionPolicySpec()
    defaulted = evolve(
        spec,
        failure_policy=spec.failure_policy if spec.failure_policy is not None else FAIL,
        match_constraints=default_match_resources(spec.match_constraints),
    )
    if defaulted == policy.spec:
        return policy
    return evolve(policy, spec=defaulted)


def default_validating_admission_policy_binding(
    binding: ValidatingAdmissionPolicyBinding,
) -> ValidatingAdmissionPolicyBinding:
    """A binding's ``matchResources`` defaults, when it has one."""
    spec = binding.spec
    if spec is None or spec.match_resources is None:
        return binding
    match = default_match_resources(spec.match_resources)
    if match is spec.match_resources:
        return binding
    return evolve(binding, spec=evolve(spec, match_resources=match))
