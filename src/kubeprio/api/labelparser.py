"""``labels.Parse``: the ``labelSelector`` string syntax, lexed and parsed as upstream does.

Mirrors the ``Lexer`` and ``Parser`` of ``k8s.io/apimachinery/pkg/labels/selector.go``
(v1.35 line): comma-separated requirements, each ``[!]key``, ``key (=|==|!=) [value]``,
``key (>|<) integer`` or ``key (in|notin) (v1, v2, ...)``; ``in``/``notin`` are plain
identifiers where a value is expected; a NUL byte ends the input as upstream's byte
reader does. Every requirement is checked by ``api.selectors.new_requirement`` and every
:class:`~kubeprio.api.selectors.SelectorError` carries upstream's text. The result is an
``api.selectors.LabelSelector``.

Callers: ``apiserver`` (``?labelSelector=``, resource metrics), the HPA controller
(``status.selector``). Pure: no I/O.
"""

from __future__ import annotations

import enum
from typing import Final

from kubeprio.api.labelvalidation import validate_label_key
from kubeprio.api.selectors import (
    LabelSelector,
    Operator,
    Requirement,
    SelectorError,
    field_invalid_text,
    new_requirement,
)


class _Token(enum.Enum):
    END = enum.auto()
    CLOSE = enum.auto()
    COMMA = enum.auto()
    BANG = enum.auto()
    DOUBLE_EQUALS = enum.auto()
    EQUALS = enum.auto()
    GREATER = enum.auto()
    IDENTIFIER = enum.auto()
    IN = enum.auto()
    LESS = enum.auto()
    NOT_EQUALS = enum.auto()
    NOT_IN = enum.auto()
    OPEN = enum.auto()


_SYMBOLS: Final = {
    ")": _Token.CLOSE,
    ",": _Token.COMMA,
    "!": _Token.BANG,
    "==": _Token.DOUBLE_EQUALS,
    "=": _Token.EQUALS,
    ">": _Token.GREATER,
    "<": _Token.LESS,
    "!=": _Token.NOT_EQUALS,
    "(": _Token.OPEN,
}
_KEYWORDS: Final = {"in": _Token.IN, "notin": _Token.NOT_IN}
_SPECIAL: Final = frozenset("=!(),><")
_WHITESPACE: Final = frozenset(" \t\r\n")
_BINARY_OPERATORS: Final = "in, notin, =, ==, !=, gt, lt"
_TOKEN_OPERATORS: Final = {
    _Token.IN: Operator.IN,
    _Token.EQUALS: Operator.EQUALS,
    _Token.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    _Token.GREATER: Operator.GREATER_THAN,
    _Token.LESS: Operator.LESS_THAN,
    _Token.NOT_IN: Operator.NOT_IN,
    _Token.NOT_EQUALS: Operator.NOT_EQUALS,
}
_NUL: Final = "\0"


def _lex(text: str) -> list[tuple[_Token, str]]:
    """Tokenise up to the first end token, as upstream ``Lexer.Lex`` + ``Parser.scan``.

    Upstream reads bytes and treats a NUL byte like the end of input: a NUL where a
    token starts ends the selector; inside a token it ends the token and is dropped.
    """
    items: list[tuple[_Token, str]] = []
    pos, size = 0, len(text)
    while True:
        ch = _NUL
        while pos < size:
            ch = text[pos]
            pos += 1
            if ch not in _WHITESPACE:
                break
            ch = _NUL
        if ch == _NUL:
            items.append((_Token.END, ""))
            return items
        start = pos - 1
        if ch in _SPECIAL:
            # Longest operator that is a prefix of the run of special characters.
            literal = ch
            pos = start + 1
            while pos < size and text[pos] in _SPECIAL and text[start : pos + 1] in _SYMBOLS:
                pos += 1
                literal = text[start:pos]
            if pos < size and text[pos] == _NUL:
                pos += 1
            items.append((_SYMBOLS[literal], literal))
            continue
        pos = start
        while pos < size and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            if text[pos] == _NUL:
                break
            pos += 1
        literal = text[start:pos]
        if pos < size and text[pos] == _NUL:
            pos += 1
        items.append((_KEYWORDS.get(literal, _Token.IDENTIFIER), literal))


class _Parser:
    """Recursive descent over the token list (upstream ``labels.Parser``).

    ``values=True`` is upstream's ``Values`` context, where ``in``/``notin`` are plain
    identifiers (``in=notin`` and ``x in (in)`` are valid).
    """

    def __init__(self, text: str) -> None:
        self._items = _lex(text)
        self._position = 0

    def _peek(self, *, values: bool = True) -> tuple[_Token, str]:
        token, literal = self._items[min(self._position, len(self._items) - 1)]
        if values and token in (_Token.IN, _Token.NOT_IN):
            token = _Token.IDENTIFIER
        return token, literal

    def _next(self, *, values: bool = True) -> tuple[_Token, str]:
        item = self._peek(values=values)
        self._position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token, literal = self._peek()
            if token is _Token.END:
                return requirements
            if token not in (_Token.IDENTIFIER, _Token.BANG):
                raise SelectorError(
                    f"found '{literal}', expected: !, identifier, or 'end of string'"
                )
            try:
                requirements.append(self._requirement())
            except SelectorError as exc:
                raise SelectorError(f"unable to parse requirement: {exc}") from exc
            token, literal = self._next()
            if token is _Token.END:
                return requirements
            if token is not _Token.COMMA:
                raise SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            token, literal = self._peek()
            if token not in (_Token.IDENTIFIER, _Token.BANG):
                raise SelectorError(f"found '{literal}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        key, op = self._key_and_inferred_operator()
        values: list[str] = []
        if op is None:
            op = self._operator()
            found = self._value_set() if op in (Operator.IN, Operator.NOT_IN) else self._exact()
            values = sorted(found)
        return new_requirement(key, op, values)

    def _key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        op = None
        token, literal = self._next()
        if token is _Token.BANG:
            op = Operator.DOES_NOT_EXIST
            token, literal = self._next()
        if token is not _Token.IDENTIFIER:
            raise SelectorError(f"found '{literal}', expected: identifier")
        if errors := validate_label_key(literal):
            # Upstream passes a nil field path here, which prints as "<nil>".
            raise SelectorError(field_invalid_text("<nil>", literal, "; ".join(errors)))
        if op is None and self._peek()[0] in (_Token.END, _Token.COMMA):
            op = Operator.EXISTS
        return literal, op

    def _operator(self) -> Operator:
        token, literal = self._next(values=False)
        op = _TOKEN_OPERATORS.get(token)
        if op is None:
            raise SelectorError(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        return op

    def _value_set(self) -> set[str]:
        token, literal = self._next()
        if token is not _Token.OPEN:
            raise SelectorError(f"found '{literal}' expected: '('")
        token, literal = self._peek()
        if token is _Token.CLOSE:  # "()" is the set holding the empty string
            self._next()
            return {""}
        if token not in (_Token.IDENTIFIER, _Token.COMMA):
            raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")
        found = self._identifier_list()
        self._next()  # the ")" that _identifier_list saw
        return found

    def _identifier_list(self) -> set[str]:
        """Comma-separated values, where an empty slot (``(,a)``, ``(a,)``) means ``""``."""
        found: set[str] = set()
        while True:
            token, literal = self._next()
            if token is _Token.IDENTIFIER:
                found.add(literal)
                after, after_literal = self._peek()
                if after is _Token.CLOSE:
                    return found
                if after is not _Token.COMMA:
                    raise SelectorError(f"found '{after_literal}', expected: ',' or ')'")
            elif token is _Token.COMMA:
                after = self._peek()[0]
                if not found or after in (_Token.CLOSE, _Token.COMMA):
                    found.add("")
                if after is _Token.CLOSE:
                    return found
            else:
                raise SelectorError(f"found '{literal}', expected: ',', or identifier")

    def _exact(self) -> set[str]:
        if self._peek()[0] in (_Token.END, _Token.COMMA):
            return {""}
        token, literal = self._next()
        if token is not _Token.IDENTIFIER:
            raise SelectorError(f"found '{literal}', expected: identifier")
        return {literal}


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` string, upstream ``labels.Parse``; ``""`` is everything.

    Grammar: comma-separated requirements, each ``[!]key``, ``key (=|==|!=) [value]``,
    ``key (>|<) integer`` or ``key (in|notin) (v1, v2, ...)``; blanks are spaces, tabs,
    CR and LF. Set values come out sorted and deduplicated. Raises
    :class:`SelectorError` with upstream's message.
    """
    return LabelSelector(tuple(_Parser(text).parse()))
