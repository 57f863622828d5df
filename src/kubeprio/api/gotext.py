"""How Go prints values in error messages: ``%q`` string quoting, ``%v`` and JSON type names.

Upstream's messages embed Go-formatted values (``Invalid value: "x"``, ``json: cannot
unmarshal string into ...``); reproducing them byte for byte needs Go's rules, kept here
once for every module that writes such messages. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

GO_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
GO_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})
"""The texts ``strconv.ParseBool`` reads as true and as false (anything else is an error)."""

_GO_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(text: str) -> str:
    """Render ``text`` as Go's ``%q`` (``strconv.Quote``) does, for error messages."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        escaped = _GO_SHORT_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch.isprintable():  # same classes as Go's unicode.IsPrint
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x20 or code == 0x7F:
                out.append(f"\\x{code:02x}")
            elif 0xDC80 <= code <= 0xDCFF:  # a raw byte kept by "surrogateescape"
                out.append(f"\\x{code & 0xFF:02x}")
            elif 0xD800 <= code <= 0xDFFF:  # invalid UTF-8: Go escapes each byte
                out.extend(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def json_kind(value: object) -> str:
    """Name a decoded JSON value's type the way Go's decoder does in its errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def go_value(value: object) -> str:
    """Go's ``%v`` of a decoded JSON value: ``map[k:v ...]`` with sorted keys, ``[a b]``,
    bare strings, ``<nil>``; a whole float prints without a fraction (``1``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)
