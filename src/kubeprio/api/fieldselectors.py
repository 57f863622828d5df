"""Field selectors, parsed and matched exactly as Kubernetes does (``pkg/fields``).

Mirrors ``k8s.io/apimachinery/pkg/fields/selector.go`` (v1.35 line): ``fields.ParseSelector``
(:func:`parse_field_selector`), ``fields.EscapeValue``/``UnescapeValue`` and the
``Requirement``/``Selector`` model. Only ``=``, ``==`` and ``!=`` exist (``==`` is kept
as ``=``), values escape ``\\``, ``,`` and ``=`` with a backslash, terms are sorted as
raw text, and a missing field compares as the empty string. Which fields a resource
supports is the API server's business (``api.fields``), not this module's. Errors are
``api.selectors.SelectorError`` with upstream's text.

Matching runs once per object in list and watch filtering: ``FieldSelector.matcher``
builds a predicate over the objects' field readers, so no mapping of fields is built per
object.

Callers: ``apiserver.listing`` (``?fieldSelector=``) and ``apiserver.resourcemetrics``.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api.selectors import Operator, SelectorError

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "escape_field_value",
    "parse_field_selector",
]

_FIELD_OPERATORS: Final = (
    ("!=", Operator.NOT_EQUALS),
    ("==", Operator.EQUALS),  # checked before "=" so no "=" is left on the value
    ("=", Operator.EQUALS),
)


@dataclasses.dataclass(frozen=True, slots=True)
class FieldRequirement:
    """``field op value`` with op ``=``/``==`` (same meaning) or ``!=``.

    A field the object lacks compares as ``""``; the parser writes ``==`` as ``=``.
    """

    field: str
    operator: Operator
    value: str

    def __post_init__(self) -> None:
        if self.operator not in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
            raise SelectorError(
                f"field selector operator {str(self.operator)!r} is not supported: use =, == or !="
            )

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether the object's field values satisfy this term."""
        equal = fields.get(self.field, "") == self.value
        return equal if self.operator is not Operator.NOT_EQUALS else not equal

    def __str__(self) -> str:
        op = "!=" if self.operator is Operator.NOT_EQUALS else "="
        return f"{self.field}{op}{escape_field_value(self.value)}"


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSelector:
    """An AND of :class:`FieldRequirement` s (upstream ``fields.Selector``); none is everything.

    Which field names a resource supports is the API server's business, not this
    class's: it matches whatever mapping of field paths it is given.
    """

    requirements: tuple[FieldRequirement, ...] = ()
    _terms: tuple[tuple[str, str, bool], ...] = dataclasses.field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        requirements = tuple(self.requirements)
        object.__setattr__(self, "requirements", requirements)
        terms = tuple(
            (r.field, r.value, r.operator is not Operator.NOT_EQUALS) for r in requirements
        )
        object.__setattr__(self, "_terms", terms)

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether ``fields`` (field path to string value; missing: empty) satisfy every term."""
        readers = {name: _mapping_reader(name) for name, _value, _equal in self._terms}
        return self.matcher(readers)(fields)

    def matcher(self, readers: Mapping[str, Callable[[Any], str]]) -> Callable[[Any], bool]:
        """A predicate over objects whose fields ``readers`` read (``readers[field](obj)``):
        a list or watch tests each object, twice per watch event, without building a
        mapping of its fields."""
        terms = tuple((readers[name], value, equal) for name, value, equal in self._terms)

        def satisfied(obj: Any) -> bool:
            for read, value, equal in terms:  # noqa: SIM110 (a loop beats all() here)
                if (read(obj) == value) is not equal:
                    return False
            return True

        return satisfied

    def is_empty(self) -> bool:
        """True when there are no terms: the selector matches everything."""
        return not self.requirements

    def value_for(self, field: str) -> str | None:
        """The value the first ``field=value`` term pins, or ``None`` (``RequiresExactMatch``)."""
        for requirement in self.requirements:
            if requirement.field == field and requirement.operator is not Operator.NOT_EQUALS:
                return requirement.value
        return None

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)


def escape_field_value(value: str) -> str:
    """Backslash-escape ``\\``, ``,`` and ``=`` (upstream ``fields.EscapeValue``; not ``!``)."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(text: str) -> str:
    """Upstream ``fields.UnescapeValue``: only ``\\\\``, ``\\,`` and ``\\=`` are escapes."""
    if "\\" not in text and "," not in text and "=" not in text:
        return text
    out: list[str] = []
    escaping = False
    for ch in text:
        if escaping:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaping = False
        elif ch == "\\":
            escaping = True
        elif ch in ",=":
            # Upstream formats the rune with %v, which prints its code point.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaping:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    """Split on commas not preceded by an escaping backslash (upstream ``splitTerms``)."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    escaping = False
    for index, ch in enumerate(text):
        if escaping:
            escaping = False
        elif ch == "\\":
            escaping = True
        elif ch == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _split_field_term(term: str) -> tuple[str, Operator, str] | None:
    """Split at the first operator (upstream ``splitTerm``); the field has no escaping."""
    for index in range(len(term)):
        for symbol, op in _FIELD_OPERATORS:
            if term.startswith(symbol, index):
                return term[:index], op, term[index + len(symbol) :]
    return None


def _mapping_reader(name: str) -> Callable[[Mapping[str, str]], str]:
    return lambda fields: fields.get(name, "")


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` string, upstream ``fields.ParseSelector``.

    Terms are sorted as raw text first (so the order, and ``str()``, are
    deterministic); empty terms are skipped, and so is a term whose field and value
    are both empty (``=`` alone selects everything, as upstream). Field names are not
    checked here. Raises :class:`SelectorError` with upstream's message.
    """
    requirements = []
    for term in sorted(_split_field_terms(text)):
        if not term:
            continue
        split = _split_field_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, raw_value = split
        value = _unescape_field_value(raw_value)
        if field or value:
            requirements.append(FieldRequirement(field, op, value))
    return FieldSelector(tuple(requirements))
