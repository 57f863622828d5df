"""Go's ``net/url`` parsing, as far as Kubernetes' CEL URL library observes it.

What it is: ``url.ParseRequestURI`` (which decides whether ``url()`` and ``isURL()``
accept a text, with Go's error texts: ``parse "x": invalid URI for request``) and
``url.Parse`` (which gives the parts: scheme, host, path, query), plus the accessors
``Hostname``, ``Port``, ``EscapedPath`` and ``Query``. Kubernetes v1.32 builds with
Go 1.23; these follow that version's ``net/url/url.go``. Used by ``api.celurl``.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import string
from typing import Final

from kubeprio.api.gotext import go_quote

_SCHEME_FIRST: Final = frozenset(string.ascii_letters)
_SCHEME_REST: Final = frozenset(string.ascii_letters + string.digits + "+-.")
_UNRESERVED: Final = frozenset(string.ascii_letters + string.digits + "-_.~")
_HOST_ALLOWED: Final = _UNRESERVED | frozenset("!$&'()*+,;=:[]<>\"")
# What validEncoded lets stand unescaped in a path (RFC 3986 pchar plus "/").
_PATH_ALLOWED: Final = _UNRESERVED | frozenset("!$&'()*+,;=:@[]/")
_HEX: Final = frozenset(string.hexdigits)


class UrlError(ValueError):
    """A text Go's ``net/url`` refuses; the message is Go's ``err.Error()``."""


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedUrl:
    """The parts of a URL that the CEL library reads."""

    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""

    def hostname(self) -> str:
        """``URL.Hostname``: the host without port and without IPv6 brackets."""
        return _split_host_port(self.host)[0]

    def port(self) -> str:
        """``URL.Port``: the digits after the host's last colon, or empty."""
        return _split_host_port(self.host)[1]

    def escaped_path(self) -> str:
        """``URL.EscapedPath``: the path as written when that is a valid encoding."""
        if (
            self.raw_path
            and _valid_encoded(self.raw_path)
            and _unescape(self.raw_path) == self.path
        ):
            return self.raw_path
        if self.path == "*":
            return "*"
        return _escape_path(self.path)

    def query(self) -> dict[str, list[str]]:
        """``URL.Query``: ``ParseQuery`` of the raw query, pairs that do not parse skipped."""
        found: dict[str, list[str]] = {}
        for pair in self.raw_query.split("&"):
            if not pair or ";" in pair:
                continue
            key, _, value = pair.partition("=")
            try:
                decoded_key = _unescape(key, plus_is_space=True)
                decoded_value = _unescape(value, plus_is_space=True)
            except UrlError:
                continue
            found.setdefault(decoded_key, []).append(decoded_value)
        return found


def _split_host_port(host: str) -> tuple[str, str]:
    port = ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    return port[0] == ":" and all("0" <= ch <= "9" for ch in port[1:])


def _valid_encoded(text: str) -> bool:
    return all(ch in _PATH_ALLOWED or ch == "%" for ch in text)


def _escape_path(path: str) -> str:
    out = []
    for ch in path:
        if ch in _PATH_ALLOWED:
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogateescape"))
    return "".join(out)


def _unescape(text: str, *, plus_is_space: bool = False, host: bool = False) -> str:
    """Go's ``unescape``: ``%XX`` decoded (``invalid URL escape "%zz"`` otherwise); in a
    host, a character that must be escaped is ``invalid character " " in host name``."""
    raw = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            escape = text[i + 1 : i + 3]
            if len(escape) < 2 or not all(c in _HEX for c in escape):
                shown = text[i : i + 3]
                raise UrlError(f"invalid URL escape {go_quote(shown)}")
            raw.append(int(escape, 16))
            i += 3
            continue
        if host and ord(ch) < 0x80 and ch not in _HOST_ALLOWED:
            raise UrlError(f"invalid character {go_quote(ch)} in host name")
        if plus_is_space and ch == "+":
            raw.append(0x20)
        else:
            raw.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return raw.decode("utf-8", "surrogateescape")


def _scheme(text: str) -> tuple[str, str]:
    """Go's ``getScheme``: the scheme and the rest, or no scheme."""
    for i, ch in enumerate(text):
        if ch in _SCHEME_FIRST:
            continue
        if ch in _SCHEME_REST:
            if i == 0:
                return "", text
            continue
        if ch == ":":
            if i == 0:
                raise UrlError("missing protocol scheme")
            return text[:i], text[i + 1 :]
        return "", text
    return "", text


def _host(authority: str) -> str:
    """Go's ``parseAuthority`` and ``parseHost`` (user info dropped)."""
    at = authority.rfind("@")
    host = authority[at + 1 :] if at >= 0 else authority
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            raise UrlError("missing ']' in host")
        port = host[close + 1 :]
        if not _valid_optional_port(port):
            raise UrlError(f"invalid port {go_quote(port)} after host")
    else:
        colon = host.rfind(":")
        if colon != -1 and not _valid_optional_port(host[colon:]):
            raise UrlError(f"invalid port {go_quote(host[colon:])} after host")
    return _unescape(host, host=True)


def _parse(text: str, *, via_request: bool) -> ParsedUrl:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise UrlError("net/url: invalid control character in URL")
    if text == "" and via_request:
        raise UrlError("empty url")
    if text == "*":
        return ParsedUrl(path="*")
    scheme, rest = _scheme(text)
    scheme = scheme.lower()
    raw_query = ""
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return ParsedUrl(scheme=scheme, opaque=rest, raw_query=raw_query)
        if via_request:
            raise UrlError("invalid URI for request")
        segment = rest.split("/", 1)[0]
        if ":" in segment:
            raise UrlError("first path segment in URL cannot contain colon")
    host = ""
    if (scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, remainder = rest[2:].partition("/")
        host = _host(authority)
        rest = slash + remainder
    path = _unescape(rest)
    return ParsedUrl(
        scheme=scheme,
        host=host,
        path=path,
        raw_path=rest if _escape_path(path) != rest else "",
        raw_query=raw_query,
    )


def parse_request_uri(text: str) -> ParsedUrl:
    """``url.ParseRequestURI``: an absolute URL or an absolute path; no fragment split."""
    try:
        return _parse(text, via_request=True)
    except UrlError as failure:
        raise UrlError(f"parse {go_quote(text)}: {failure}") from None


def parse(text: str) -> ParsedUrl:
    """``url.Parse``: the fragment (after ``#``) is cut off first."""
    without_fragment = text.partition("#")[0]
    try:
        return _parse(without_fragment, via_request=False)
    except UrlError as failure:
        raise UrlError(f"parse {go_quote(text)}: {failure}") from None
