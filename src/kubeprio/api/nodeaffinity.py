"""Node selectors and node affinity matching, as upstream's component helpers do it.

Mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``:

* :class:`NodeSelector` is ``LazyErrorNodeSelector``: the terms of a required node
  affinity, ORed. A term ANDs its ``matchExpressions`` (label requirements with
  operators In, NotIn, Exists, DoesNotExist, Gt, Lt) and its ``matchFields`` (only
  ``metadata.name`` exists on a node; In/NotIn with exactly one value). Empty terms
  select nothing and are dropped; a term that fails to parse never matches, but the
  other terms still do ("lazy" errors, kept for backwards compatibility).
* :class:`RequiredNodeAffinity` is ``GetRequiredNodeAffinity``: ``spec.nodeSelector``
  (exact ``key=value`` labels) AND the required node-affinity terms.
* :class:`PreferredSchedulingTerms` sums the weights of the matching preferred terms;
  unlike the required selector it fails to build when any term fails to parse.

Callers: the scheduler's NodeAffinity and PodTopologySpread plugins, the kubelet's
admission check. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final

from kubeprio.api import selectors
from kubeprio.api.core import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from kubeprio.api.core import NodeSelector as NodeSelectorSpec
from kubeprio.errors import KubeprioError

OBJECT_NAME_FIELD: Final = "metadata.name"
"""The only node field ``matchFields`` can select on (``metav1.ObjectNameField``)."""

_LABEL_OPERATORS: Final = {
    "In": selectors.Operator.IN,
    "NotIn": selectors.Operator.NOT_IN,
    "Exists": selectors.Operator.EXISTS,
    "DoesNotExist": selectors.Operator.DOES_NOT_EXIST,
    "Gt": selectors.Operator.GREATER_THAN,
    "Lt": selectors.Operator.LESS_THAN,
}


class NodeAffinityError(KubeprioError, ValueError):
    """A node selector term that upstream fails to parse (the message lists every problem)."""


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label_selector(
    requirements: Sequence[NodeSelectorRequirement], path: str
) -> tuple[selectors.LabelSelector | None, list[str]]:
    """``nodeSelectorRequirementsAsSelector``: every requirement, or the errors."""
    errors: list[str] = []
    parsed: list[selectors.Requirement] = []
    for i, expr in enumerate(requirements):
        op = _LABEL_OPERATORS.get(expr.operator or "")
        if op is None:
            errors.append(f"{path}[{i}].operator: Unsupported value: {_quote(expr.operator or '')}")
            continue
        try:
            parsed.append(selectors.new_requirement(expr.key or "", op, expr.values or ()))
        except selectors.SelectorError as exc:
            errors.append(f"{path}[{i}]: {exc}")
    if errors:
        return None, errors
    return selectors.LabelSelector(tuple(parsed)), []


_FieldTerm = tuple[str, bool, str]  # (field, equal?, value)


def _field_selector(
    requirements: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[_FieldTerm, ...] | None, list[str]]:
    """``nodeSelectorRequirementsAsFieldSelector``: In/NotIn with exactly one value."""
    errors: list[str] = []
    terms: list[_FieldTerm] = []
    for i, expr in enumerate(requirements):
        values = expr.values or ()
        if expr.operator in ("In", "NotIn"):
            if len(values) != 1:
                errors.append(f"{path}[{i}].values: Invalid value: must have one element")
            else:
                terms.append((expr.key or "", expr.operator == "In", values[0]))
        else:
            errors.append(
                f"{path}[{i}].operator: Unsupported value: {_quote(expr.operator or '')}:"
                ' supported values: "In", "NotIn"'
            )
    if errors:
        return None, errors
    return tuple(terms), []


def _is_empty_term(term: NodeSelectorTerm | None) -> bool:
    return term is None or (not term.match_expressions and not term.match_fields)


@dataclasses.dataclass(frozen=True, slots=True)
class _Term:
    """One parsed ``nodeSelectorTerm``: label requirements AND field requirements."""

    labels: selectors.LabelSelector | None
    fields: tuple[_FieldTerm, ...] | None
    errors: tuple[str, ...] = ()

    @classmethod
    def parse(cls, term: NodeSelectorTerm, path: str) -> _Term:
        labels = fields = None
        errors: list[str] = []
        if term.match_expressions:
            labels, label_errors = _label_selector(
                term.match_expressions, path + ".matchExpressions"
            )
            errors.extend(label_errors)
        if term.match_fields:
            fields, field_errors = _field_selector(term.match_fields, path + ".matchFields")
            errors.extend(field_errors)
        return cls(labels, fields, tuple(errors))

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        """Upstream ``nodeSelectorTerm.match``; a term with parse errors never matches."""
        if self.errors:
            return False
        if self.labels is not None and not self.labels.matches(labels):
            return False
        fields = self.fields
        if fields is not None and name:  # a node without a name has no fields to check
            for field, equal, value in fields:
                actual = name if field == OBJECT_NAME_FIELD else ""
                if (actual == value) is not equal:
                    return False
        return True


_NO_LABELS: Final[Mapping[str, str]] = {}


class NodeSelector:
    """Required node-affinity terms, ORed (upstream ``LazyErrorNodeSelector``)."""

    __slots__ = ("terms",)

    def __init__(self, spec: NodeSelectorSpec) -> None:
        self.terms = tuple(
            _Term.parse(term, f"nodeSelectorTerms[{i}]")
            for i, term in enumerate(spec.node_selector_terms or ())
            if not _is_empty_term(term)
        )

    @property
    def errors(self) -> tuple[str, ...]:
        """Parse errors of every term (matching ignores them, as upstream)."""
        return tuple(error for term in self.terms for error in term.errors)

    def matches(self, node: Node) -> bool:
        """Whether any term selects ``node``."""
        labels = node.metadata.labels or _NO_LABELS
        name = node.metadata.name or ""
        for term in self.terms:  # noqa: SIM110 (explicit loop: hot path)
            if term.matches(labels, name):
                return True
        return False


class RequiredNodeAffinity:
    """``spec.nodeSelector`` AND required node affinity (upstream ``RequiredNodeAffinity``)."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(
        self,
        label_selector: selectors.LabelSelector | None,
        node_selector: NodeSelector | None,
    ) -> None:
        self.label_selector = label_selector
        self.node_selector = node_selector

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        """The pod's required node affinity (upstream ``GetRequiredNodeAffinity``)."""
        spec = pod.spec
        if spec is None:
            return cls(None, None)
        label_selector = (
            selectors.label_selector_from_set(spec.node_selector) if spec.node_selector else None
        )
        node_selector = None
        affinity = spec.affinity
        node_affinity = affinity.node_affinity if affinity is not None else None
        required = (
            node_affinity.required_during_scheduling_ignored_during_execution
            if node_affinity is not None
            else None
        )
        if required is not None:
            node_selector = NodeSelector(required)
        return cls(label_selector, node_selector)

    @property
    def is_empty(self) -> bool:
        """Neither a node selector nor required affinity: every node matches."""
        return self.label_selector is None and self.node_selector is None

    def matches(self, node: Node) -> bool:
        """Whether ``node`` satisfies both parts (parse errors are ignored, as upstream)."""
        if self.label_selector is not None and not self.label_selector.matches(
            node.metadata.labels or _NO_LABELS
        ):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(node)
        return True


class PreferredSchedulingTerms:
    """Weighted preferred node-affinity terms (upstream ``PreferredSchedulingTerms``)."""

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[tuple[_Term, int]]) -> None:
        self.terms = tuple(terms)

    @classmethod
    def parse(cls, terms: Sequence[PreferredSchedulingTerm]) -> PreferredSchedulingTerms:
        """Parse the terms; zero-weight and empty terms are dropped.

        Raises :class:`NodeAffinityError` listing every parse error
        (upstream ``NewPreferredSchedulingTerms``).
        """
        parsed: list[tuple[_Term, int]] = []
        errors: list[str] = []
        for i, term in enumerate(terms):
            if not term.weight or _is_empty_term(term.preference):
                continue
            assert term.preference is not None  # not empty
            one = _Term.parse(term.preference, f"PreferredSchedulingTerms[{i}]")
            if one.errors:
                errors.extend(one.errors)
            else:
                parsed.append((one, term.weight))
        if errors:
            raise NodeAffinityError(_aggregate(errors))
        return cls(parsed)

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms that select ``node``."""
        labels = node.metadata.labels or _NO_LABELS
        name = node.metadata.name or ""
        total = 0
        for term, weight in self.terms:
            if term.matches(labels, name):
                total += weight
        return total


def _aggregate(messages: Sequence[str]) -> str:
    """``errors.NewAggregate(...).Error()``: one message bare, several in brackets."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"
