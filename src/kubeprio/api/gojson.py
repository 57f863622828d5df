"""Go's ``encoding/json`` verdict on a document that should be a JSON object, word for word.

Upstream validates the content of ``kubernetes.io/dockercfg`` and
``kubernetes.io/dockerconfigjson`` Secrets with ``json.Unmarshal(data,
&map[string]interface{}{})`` and reports the Go error as the detail of an ``Invalid``
field error. ``object_error`` gives the same text: the scanner's syntax errors
(``invalid character 'x' looking for beginning of value``, ``... after object key``,
``unexpected end of JSON input``, ...; ``checkValid`` scans the whole input before any
decoding), then the type error of a valid document that is not an object (``json: cannot
unmarshal array into Go value of type map[string]interface {}``; ``null`` is accepted).

``syntax_error`` is the scanner's verdict alone: the API server words a request body
that is not JSON with it (``apiserver.decodeerrors``), only after Python's faster
decoder has refused the body, so correct bodies never pay for this scanner.

A recursive reading of the scanner's state machine (``encoding/json/scanner.go``).
Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.gotext import go_quote

_SPACE: Final = frozenset(b" \t\r\n")
_DIGITS: Final = frozenset(b"0123456789")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES: Final = frozenset(b'"\\/bfnrtu')
_LITERALS: Final = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_KINDS: Final = {ord("["): "array", ord('"'): "string", ord("t"): "bool", ord("f"): "bool"}
_END: Final = "unexpected end of JSON input"


class _SyntaxError(Exception):
    """The first error the scanner meets (its message is Go's)."""


def _quote_char(byte: int) -> str:
    """``quoteChar``: how the scanner shows the offending byte."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def fail(self, context: str) -> _SyntaxError:
        if self.position >= len(self.data):
            return _SyntaxError(_END)
        return _SyntaxError(f"invalid character {_quote_char(self.data[self.position])} {context}")

    def peek(self) -> int | None:
        return self.data[self.position] if self.position < len(self.data) else None

    def skip_space(self) -> None:
        while self.position < len(self.data) and self.data[self.position] in _SPACE:
            self.position += 1

    def value(self) -> None:
        self.skip_space()
        byte = self.peek()
        if byte == ord("{"):
            self.position += 1
            self.object()
        elif byte == ord("["):
            self.position += 1
            self.array()
        elif byte == ord('"'):
            self.position += 1
            self.string()
        elif byte == ord("-") or (byte is not None and byte in _DIGITS):
            self.number()
        elif byte is not None and byte in _LITERALS:
            self.literal(_LITERALS[byte])
        else:
            raise self.fail("looking for beginning of value")

    def object(self) -> None:
        self.skip_space()
        if self.peek() == ord("}"):
            self.position += 1
            return
        while True:
            self.skip_space()
            if self.peek() != ord('"'):
                raise self.fail("looking for beginning of object key string")
            self.position += 1
            self.string()
            self.skip_space()
            if self.peek() != ord(":"):
                raise self.fail("after object key")
            self.position += 1
            self.value()
            self.skip_space()
            byte = self.peek()
            if byte == ord("}"):
                self.position += 1
                return
            if byte != ord(","):
                raise self.fail("after object key:value pair")
            self.position += 1

    def array(self) -> None:
        self.skip_space()
        if self.peek() == ord("]"):
            self.position += 1
            return
        while True:
            self.value()
            self.skip_space()
            byte = self.peek()
            if byte == ord("]"):
                self.position += 1
                return
            if byte != ord(","):
                raise self.fail("after array element")
            self.position += 1

    def string(self) -> None:
        while True:
            byte = self.peek()
            if byte is None:
                raise self.fail("")
            if byte == ord('"'):
                self.position += 1
                return
            if byte < 0x20:
                raise self.fail("in string literal")
            self.position += 1
            if byte != ord("\\"):
                continue
            escape = self.peek()
            if escape is None or escape not in _ESCAPES:
                raise self.fail("in string escape code")
            self.position += 1
            if escape == ord("u"):
                for _ in range(4):
                    digit = self.peek()
                    if digit is None or digit not in _HEX:
                        raise self.fail("in \\u hexadecimal character escape")
                    self.position += 1

    def digits(self, context: str) -> None:
        byte = self.peek()
        if byte is None or byte not in _DIGITS:
            raise self.fail(context)
        while self.peek() is not None and self.peek() in _DIGITS:
            self.position += 1

    def number(self) -> None:
        if self.peek() == ord("-"):
            self.position += 1
        if self.peek() == ord("0"):
            self.position += 1
        else:
            self.digits("in numeric literal")
        if self.peek() == ord("."):
            self.position += 1
            self.digits("after decimal point in numeric literal")
        if self.peek() in (ord("e"), ord("E")):
            self.position += 1
            if self.peek() in (ord("+"), ord("-")):
                self.position += 1
            self.digits("in exponent of numeric literal")

    def literal(self, word: bytes) -> None:
        self.position += 1
        for expected in word[1:]:
            if self.peek() != expected:
                raise self.fail(f"in literal {word.decode()} (expecting {_quote_char(expected)})")
            self.position += 1


def syntax_error(data: bytes) -> str | None:
    """``checkValid``'s verdict on ``data``: Go's syntax error text, or None if it is JSON."""
    scanner = _Scanner(data)
    try:
        scanner.value()
        scanner.skip_space()
        if scanner.peek() is not None:
            raise scanner.fail("after top-level value")
    except _SyntaxError as exc:
        return str(exc)
    return None


def value_kind(value: object) -> str:
    """How ``UnmarshalTypeError`` names a decoded JSON value: object, array, string, ..."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def object_error(data: bytes) -> str | None:
    """The error of ``json.Unmarshal(data, &map[string]interface{}{})``, or None."""
    problem = syntax_error(data)
    if problem is not None:
        return problem
    first = data.lstrip(bytes(_SPACE))[:1]
    if first in (b"{", b"n"):
        return None
    kind = _KINDS.get(first[0], "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
