"""Which writes a ValidatingAdmissionPolicy (or its binding) is about.

Mirrors upstream v1.32 ``k8s.io/apiserver/pkg/admission/plugin/policy/matching``
(``Matcher.Matches``) and the webhook rule matcher it uses
(``plugin/webhook/predicates/rules``):

* **namespaceSelector**: a write to a cluster-scoped kind other than Namespace always
  matches; otherwise the selector is matched against the labels of the request's
  namespace (for a Namespace itself, the object's own labels, the old object's on
  delete). An empty selector matches everything.
* **objectSelector**: matches when the labels of the new object or of the old one match
  (a create has no old object, a delete no new one).
* **resourceRules / excludeResourceRules**: a rule matches an operation (or ``*``), the
  request's group, version and ``resource[/subresource]`` (``*``, ``pods/*``, ``*/status``,
  ``*/*``), its scope (``Cluster``, ``Namespaced`` or ``*``) and, when it lists
  ``resourceNames``, the object's name. A write matches when some resource rule does and
  no exclusion does.

``matchPolicy: Equivalent`` and ``Exact`` behave alike: kubeprio serves every kind at one
stored version, which is what the request carries. Pure functions over the request and
the namespace; driven by ``admission.validatingpolicy``.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeprio.admission.chain import AdmissionRequest, Operation
from kubeprio.api.admissionpolicy import MatchResources, NamedRuleWithOperations
from kubeprio.api.core import Namespace
from kubeprio.api.meta import LabelSelector
from kubeprio.api.selectors import label_selector_as_selector


def _labels_of(obj: object | None) -> Mapping[str, str] | None:
    if obj is None:
        return None
    metadata = getattr(obj, "metadata", None)
    return (getattr(metadata, "labels", None) or {}) if metadata is not None else {}


def _selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return True  # defaulted to {} on write; a nil one is never stored
    return label_selector_as_selector(selector).matches(labels)


def namespace_selector_matches(
    selector: LabelSelector | None, request: AdmissionRequest, namespace: Namespace | None
) -> bool:
    """``MatchNamespaceSelector``."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return True
    if request.resource.plural == "namespaces" and request.resource.group == "":
        labels = _labels_of(request.obj) or _labels_of(request.old_obj) or {}
        return _selector_matches(selector, labels)
    if not request.namespace:
        return True
    return _selector_matches(selector, _labels_of(namespace) or {})


def object_selector_matches(selector: LabelSelector | None, request: AdmissionRequest) -> bool:
    """``MatchObjectSelector``: the new or the old object's labels."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return True
    return any(
        labels is not None and _selector_matches(selector, labels)
        for labels in (_labels_of(request.obj), _labels_of(request.old_obj))
    )


def _operation_matches(operations: tuple[str, ...], operation: Operation) -> bool:
    return "*" in operations or operation.value in operations


def _resource_matches(resources: tuple[str, ...], resource: str, subresource: str) -> bool:
    for entry in resources:
        if entry == "*/*":
            return True
        wanted, slash, wanted_sub = entry.partition("/")
        if not slash:
            if subresource == "" and entry in ("*", resource):
                return True
            continue
        if wanted in ("*", resource) and wanted_sub in ("*", subresource):
            return True
    return False


def _scope_matches(scope: str | None, namespaced: bool) -> bool:
    if scope in (None, "*"):
        return True
    return scope == ("Namespaced" if namespaced else "Cluster")


def rule_matches(rule: NamedRuleWithOperations, request: AdmissionRequest) -> bool:
    """One ``NamedRuleWithOperations`` against the request."""
    info = request.resource
    if not _operation_matches(rule.operations or (), request.operation):
        return False
    groups = rule.api_groups or ()
    if "*" not in groups and info.group not in groups:
        return False
    versions = rule.api_versions or ()
    if "*" not in versions and info.version not in versions:
        return False
    if not _resource_matches(rule.resources or (), info.plural, request.subresource):
        return False
    # A namespaces write is cluster-scoped for "Cluster" rules, as upstream decides by
    # whether the request has a namespace.
    if not _scope_matches(rule.scope, bool(request.namespace)):
        return False
    names = rule.resource_names
    return not names or request.name in names


def matches(
    match: MatchResources | None, request: AdmissionRequest, namespace: Namespace | None
) -> bool:
    """A policy's ``matchConstraints`` or a binding's ``matchResources`` (``None``, a
    binding without one, matches every request its policy does)."""
    if match is None:
        return True
    if not namespace_selector_matches(match.namespace_selector, request, namespace):
        return False
    if not object_selector_matches(match.object_selector, request):
        return False
    if any(rule_matches(rule, request) for rule in match.exclude_resource_rules or ()):
        return False
    rules = match.resource_rules
    if not rules:
        return True  # "when resourceRules is unset, it does not constrain" (a binding's)
    return any(rule_matches(rule, request) for rule in rules)
