"""Go's JSON form of ``[]byte``: standard base64, decoded with Go's rules and errors.

A Secret's ``data`` and a ConfigMap's ``binaryData`` are ``map[string][]byte`` upstream;
``encoding/json`` writes each value as standard base64 (``=`` padded) and reads it back
with ``base64.StdEncoding.Decode``, which skips ``\\r`` and ``\\n`` anywhere, does not
check the unused low bits of the last quantum, and reports the first bad byte as
``illegal base64 data at input byte N`` (``CorruptInputError``). The API server returns
that text in its 400 (``Secret in version "v1" cannot be handled as a Secret: illegal
base64 data at input byte 3``), so the position follows Go's ``decodeQuantum`` exactly.

Who uses it: ``api.serialization`` for ``bytes`` fields. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_VALUES: Final = {byte: value for value, byte in enumerate(_ALPHABET)}
_PAD: Final = ord("=")
_NEWLINES: Final = frozenset(b"\r\n")


class Base64Error(ValueError):
    """Go's ``base64.CorruptInputError``: the offset of the first byte it could not use."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def encode(data: bytes) -> str:
    """``base64.StdEncoding.EncodeToString``."""
    return base64.b64encode(data).decode("ascii")


def decode(text: str) -> bytes:
    """``base64.StdEncoding.DecodeString`` of a JSON string; raises ``Base64Error``."""
    raw = text.encode("utf-8", "surrogatepass")
    try:
        # The common case (one line, canonical padding) in C; anything else, newlines
        # included, takes Go's own loop below, which also finds the error offset.
        return binascii.a2b_base64(raw, strict_mode=True)
    except binascii.Error:
        return _decode_like_go(raw)


def _skip_newlines(src: bytes, position: int) -> int:
    while position < len(src) and src[position] in _NEWLINES:
        position += 1
    return position


def _decode_like_go(src: bytes) -> bytes:
    """``Encoding.Decode``: one ``decodeQuantum`` after another."""
    out = bytearray()
    position = 0
    while position < len(src):
        position, chunk = _quantum(src, position)
        out += chunk
    return bytes(out)


def _quantum(src: bytes, position: int) -> tuple[int, bytes]:
    """``decodeQuantum``: up to four symbols (newlines skipped) into up to three bytes."""
    symbols: list[int] = []
    while len(symbols) < 4:
        if position == len(src):
            if not symbols:
                return position, b""
            # Standard encoding is padded: a short final quantum is corrupt.
            raise Base64Error(position - len(symbols))
        byte = src[position]
        position += 1
        value = _VALUES.get(byte)
        if value is not None:
            symbols.append(value)
            continue
        if byte in _NEWLINES:
            continue
        if byte != _PAD or len(symbols) < 2:
            raise Base64Error(position - 1)
        if len(symbols) == 2:
            # "==" is expected; the first "=" is consumed.
            position = _skip_newlines(src, position)
            if position == len(src):
                raise Base64Error(len(src))
            if src[position] != _PAD:
                raise Base64Error(position - 1)
            position += 1
        position = _skip_newlines(src, position)
        if position < len(src):
            # Trailing garbage after the padding.
            raise Base64Error(position)
        break
    value = 0
    for symbol in symbols:
        value = value << 6 | symbol
    value <<= 6 * (4 - len(symbols))
    full = value.to_bytes(3, "big")
    return position, full[: len(symbols) - 1]
