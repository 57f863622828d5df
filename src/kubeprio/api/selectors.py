"""Label selectors, parsed and matched exactly as Kubernetes does.

Two upstream pieces of ``k8s.io/apimachinery`` (v1.35 line) live here (field selectors,
``pkg/fields``, are ``api.fieldselectors``; the ``labels.Parse`` string syntax is
``api.labelparser``):

* ``pkg/labels/selector.go``: the ``Requirement``/``Selector`` model and its ``String()`` form. The operators are
  ``=``, ``==``, ``!=``, ``in (...)``, ``notin (...)``, ``key`` (exists), ``!key`` and
  ``>``/``<`` (integer comparison). Requirements are kept sorted by key, as every
  upstream constructor does.
* ``pkg/apis/meta/v1/helpers.go``: ``LabelSelectorAsSelector``
  (:func:`label_selector_from_match`, :func:`label_selector_as_selector`). A nil
  selector matches nothing (:class:`Nothing`); a present but empty one matches
  everything.

Label keys and values are checked by ``api.labelvalidation`` (``IsLabelKey``,
``IsLabelValue``); :func:`validate_label_key` and :func:`validate_label_value` are
exported from here too, for ``api.validation`` to wrap in field errors. Every :class:`SelectorError`
message is the text upstream's error would print, Go quoting included, so that kubectl
shows the same thing.

Matching runs once per object in list and watch filtering, so selectors compile their
requirements into small closures at construction; a plain ``app=web`` selector checks
with one ``dict.get`` per term.

Callers: ``apiserver`` (``?labelSelector=``), ``api.fieldselectors``, ``client.informer``,
controllers and admission (workload and PDB selectors), ``api.validation``. Pure: no
I/O, standard library plus ``kubeprio.errors`` only.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from kubeprio.api.gosyntax import go_syntax, string_slice
from kubeprio.api.gotext import go_quote
from kubeprio.api.labelvalidation import validate_label_key, validate_label_value
from kubeprio.api.model import INT64_MAX, INT64_MIN
from kubeprio.errors import KubeprioError

if TYPE_CHECKING:  # only for annotations: meta may come to import this module
    from kubeprio.api import meta

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "LabelSelector",
    "Nothing",
    "Operator",
    "Requirement",
    "Selector",
    "SelectorError",
    "label_selector_as_selector",
    "label_selector_from_match",
    "label_selector_from_set",
    "new_requirement",
    "validate_label_key",
    "validate_label_value",
]

_LabelTest = Callable[[Mapping[str, str]], bool]  # a compiled requirement


class SelectorError(KubeprioError, ValueError):
    """A selector string or ``metav1.LabelSelector`` that upstream would reject.

    The message is upstream's error text verbatim; the API server turns it into a
    400 BadRequest (list/watch) or an Invalid cause (object validation).
    """


# --- Go-compatible rendering of error values ------------------------------------------


def field_invalid_text(path: str, value: str | Sequence[str] | None, detail: str) -> str:
    """The text of ``field.Invalid(path, value, detail).Error()``: a ``[]string`` value
    printed with ``%#v`` (``[]string{"a", "b"}``, ``[]string(nil)``), as v1.32 does."""
    rendered = go_quote(value) if isinstance(value, str) else go_syntax(string_slice(value))
    return f"{path}: Invalid value: {rendered}: {detail}"


def _aggregate(messages: Iterable[str]) -> str:
    """The text of ``ErrorList.ToAggregate().Error()``: deduplicated, bracketed if several."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# --- label requirements ----------------------------------------------------------------

_GO_INT_RE: Final = re.compile("[+-]?[0-9]+")


def _parse_go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: ASCII digits, optional sign, int64 range."""
    if _GO_INT_RE.fullmatch(text) is None:
        return None
    number = int(text)
    return number if INT64_MIN <= number <= INT64_MAX else None


class Operator(enum.StrEnum):
    """``selection.Operator``: the wire spelling of each requirement operator."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_POSITIVE: Final = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN})
_NEGATIVE: Final = frozenset({Operator.NOT_EQUALS, Operator.NOT_IN})
_INFIX: Final = {
    Operator.EQUALS: "=",
    Operator.DOUBLE_EQUALS: "==",
    Operator.NOT_EQUALS: "!=",
    Operator.IN: " in (",
    Operator.NOT_IN: " notin (",
    Operator.GREATER_THAN: ">",
    Operator.LESS_THAN: "<",
}


def _never(labels: Mapping[str, str]) -> bool:
    return False


def _compile(key: str, op: Operator, values: tuple[str, ...]) -> _LabelTest:
    """Build the matcher for one requirement (upstream ``Requirement.Matches``)."""
    if op in _POSITIVE or op in _NEGATIVE:
        positive = op in _POSITIVE
        if len(values) == 1:
            wanted = values[0]
            if positive:
                return lambda labels: labels.get(key) == wanted
            return lambda labels: labels.get(key) != wanted  # a missing key matches
        allowed = frozenset(values)
        if positive:
            return lambda labels: labels.get(key) in allowed
        return lambda labels: labels.get(key) not in allowed
    if op is Operator.EXISTS:
        return lambda labels: key in labels
    if op is Operator.DOES_NOT_EXIST:
        return lambda labels: key not in labels
    bound = _parse_go_int(values[0]) if len(values) == 1 else None
    if bound is None:
        return _never  # upstream logs and answers false
    greater = op is Operator.GREATER_THAN

    def ordered(labels: Mapping[str, str]) -> bool:
        text = labels.get(key)
        number = None if text is None else _parse_go_int(text)
        if number is None:
            return False
        return number > bound if greater else number < bound

    return ordered


@dataclasses.dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a label selector: ``key``, ``operator`` and ``values``.

    Construction does not validate (like upstream's struct literal); use
    :func:`new_requirement` for upstream ``NewRequirement`` checks. ``values`` keeps
    the given order; ``str()`` sorts it, as upstream ``String()`` does.
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    _test: _LabelTest = dataclasses.field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.values, tuple):
            object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "_test", _compile(self.key, self.operator, self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (``NotIn``/``!=`` match a missing key)."""
        return self._test(labels)

    def __reduce__(self) -> tuple[type[Requirement], tuple[str, Operator, tuple[str, ...]]]:
        # Rebuild through __init__: the compiled closure cannot be pickled.
        return (Requirement, (self.key, self.operator, self.values))

    def __str__(self) -> str:
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        closing = ")" if self.operator in (Operator.IN, Operator.NOT_IN) else ""
        return f"{self.key}{_INFIX[self.operator]}{values}{closing}"


def _requirement_errors(key: str, op: Operator, values: Sequence[str] | None) -> list[str]:
    """Upstream ``NewRequirement`` checks; ``values=None`` stands for a Go nil slice.

    Upstream passes no field path, so paths are relative: ``key``, ``values[0][<key>]``.
    """
    errors = []
    if key_errors := validate_label_key(key):
        errors.append(field_invalid_text("key", key, "; ".join(key_errors)))
    given = values or ()
    values_path = "values"
    if op in (Operator.IN, Operator.NOT_IN):
        if not given:
            errors.append(
                field_invalid_text(
                    values_path, values, "for 'in', 'notin' operators, values set can't be empty"
                )
            )
    elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(given) != 1:
            errors.append(
                field_invalid_text(
                    values_path, values, "exact-match compatibility requires one single value"
                )
            )
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if given:
            errors.append(
                field_invalid_text(
                    values_path, values, "values set must be empty for exists and does not exist"
                )
            )
    else:
        if len(given) != 1:
            errors.append(
                field_invalid_text(
                    values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"
                )
            )
        errors.extend(
            field_invalid_text(
                f"{values_path}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"
            )
            for i, v in enumerate(given)
            if _parse_go_int(v) is None
        )
    for i, value in enumerate(given):
        if value_errors := validate_label_value(value):
            errors.append(
                field_invalid_text(f"{values_path}[{i}][{key}]", value, "; ".join(value_errors))
            )
    return errors


def new_requirement(key: str, operator: Operator, values: Sequence[str] = ()) -> Requirement:
    """Build a validated :class:`Requirement`, upstream ``labels.NewRequirement``.

    In/NotIn need at least one value, =/==/!= exactly one, Exists/DoesNotExist none,
    gt/lt one integer; the key and every value must be valid label key/values.
    Raises :class:`SelectorError` with every problem, upstream's aggregate text.
    """
    if errors := _requirement_errors(key, operator, values):
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values))


# --- label selectors -------------------------------------------------------------------


class Selector(abc.ABC):
    """Upstream ``labels.Selector``: what list/watch filtering and controllers call."""

    __slots__ = ()

    @abc.abstractmethod
    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with these labels is selected."""

    @abc.abstractmethod
    def is_empty(self) -> bool:
        """Whether the selector places no restriction (upstream ``Empty()``)."""

    @abc.abstractmethod
    def value_for(self, key: str) -> str | None:
        """The value ``key`` must have, if the selector pins it (``RequiresExactMatch``)."""

    @abc.abstractmethod
    def __str__(self) -> str:
        """Upstream ``String()``: the canonical ``labelSelector`` query form."""


def _by_key(requirement: Requirement) -> str:
    return requirement.key


@dataclasses.dataclass(frozen=True, slots=True)
class LabelSelector(Selector):
    """An AND of :class:`Requirement` s, kept sorted by key (stable, as upstream ``Add``).

    No requirements means everything (:data:`EVERYTHING`).
    """

    requirements: tuple[Requirement, ...] = ()
    # Fast path: when every term is ``key=value`` (the common case), a tuple of pairs.
    _pairs: tuple[tuple[str, str], ...] | None = dataclasses.field(
        init=False, repr=False, compare=False, hash=False
    )
    _tests: tuple[_LabelTest, ...] = dataclasses.field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        requirements = tuple(self.requirements)
        if any(a.key > b.key for a, b in itertools.pairwise(requirements)):
            requirements = tuple(sorted(requirements, key=_by_key))
        object.__setattr__(self, "requirements", requirements)
        pairs = None
        if all(r.operator in _POSITIVE and len(r.values) == 1 for r in requirements):
            pairs = tuple((r.key, r.values[0]) for r in requirements)
        object.__setattr__(self, "_pairs", pairs)
        object.__setattr__(self, "_tests", tuple(r._test for r in requirements))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement."""
        pairs = self._pairs
        if pairs is not None:
            get = labels.get
            # Explicit loops, not all(...): a generator costs more than the test itself.
            for key, value in pairs:  # noqa: SIM110
                if get(key) != value:
                    return False
            return True
        for test in self._tests:  # noqa: SIM110
            if not test(labels):
                return False
        return True

    def is_empty(self) -> bool:
        """True for the selector with no requirements, which matches everything."""
        return not self.requirements

    def __reduce__(self) -> tuple[type[LabelSelector], tuple[tuple[Requirement, ...]]]:
        # Rebuild through __init__: the compiled closures cannot be pickled.
        return (LabelSelector, (self.requirements,))

    def value_for(self, key: str) -> str | None:
        """The value pinned for ``key`` by its first requirement (=, == or single ``in``)."""
        for requirement in self.requirements:
            if requirement.key == key:
                if requirement.operator in _POSITIVE and len(requirement.values) == 1:
                    return requirement.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)


@dataclasses.dataclass(frozen=True, slots=True)
class Nothing(Selector):
    """The selector that matches no object, upstream ``labels.Nothing()`` (a nil selector)."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Always false."""
        return False

    def is_empty(self) -> bool:
        """False: it restricts the selection to nothing."""
        return False

    def value_for(self, key: str) -> str | None:
        """Never pins a value."""
        return None

    def __str__(self) -> str:
        return ""


EVERYTHING: Final = LabelSelector()
"""The empty selector: matches every object (upstream ``labels.Everything()``)."""

NOTHING: Final = Nothing()
"""The selector that matches nothing (upstream ``labels.Nothing()``)."""


def label_selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """``key=value`` for every entry, unvalidated (upstream ``labels.SelectorFromSet``)."""
    return LabelSelector(
        tuple(Requirement(k, Operator.EQUALS, (v,)) for k, v in sorted(labels.items()))
    )


_MATCH_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def label_selector_from_match(
    match_labels: Mapping[str, str] | None,
    match_expressions: Sequence[tuple[str, str, Sequence[str] | None]] | None,
) -> LabelSelector | Nothing:
    """Convert ``matchLabels`` + ``matchExpressions``, upstream ``LabelSelectorAsSelector``.

    Both ``None`` stands for a nil ``*LabelSelector`` and gives :data:`NOTHING`; any
    other empty combination gives :data:`EVERYTHING`. (A decoded ``selector: {}`` has
    both fields absent yet is *not* nil upstream: use :func:`label_selector_as_selector`
    for decoded objects.) Expressions are ``(key, operator, values)`` with operator
    ``In``, ``NotIn``, ``Exists`` or ``DoesNotExist``. The first invalid entry raises
    :class:`SelectorError` with upstream's text; matchLabels are checked in key order
    (upstream's Go map order is random) and before the expressions.
    """
    if match_labels is None and match_expressions is None:
        return NOTHING
    labels = match_labels or {}
    expressions = match_expressions or ()
    requirements = []
    for key, value in sorted(labels.items()):
        if errors := _requirement_errors(key, Operator.EQUALS, (value,)):
            raise SelectorError(_aggregate(errors))
        requirements.append(Requirement(key, Operator.EQUALS, (value,)))
    for key, operator_name, values in expressions:
        op = _MATCH_OPERATORS.get(operator_name)
        if op is None:
            raise SelectorError(f"{go_quote(operator_name)} is not a valid label selector operator")
        given = tuple(values) if values else None  # upstream copies into a nil slice
        if errors := _requirement_errors(key, op, given):
            raise SelectorError(_aggregate(errors))
        requirements.append(Requirement(key, op, given or ()))
    return LabelSelector(tuple(requirements))


def label_selector_as_selector(selector: meta.LabelSelector | None) -> LabelSelector | Nothing:
    """Convert a decoded ``metav1.LabelSelector`` object; ``None`` (nil) matches nothing.

    Unlike :func:`label_selector_from_match`, an object whose fields are both absent is
    the empty selector and matches everything, exactly as upstream.
    """
    if selector is None:
        return NOTHING
    expressions = [
        (e.key or "", e.operator or "", e.values) for e in selector.match_expressions or ()
    ]
    return label_selector_from_match(selector.match_labels or {}, expressions)
