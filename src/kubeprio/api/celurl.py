"""Kubernetes' CEL URL library: ``url()``, ``isURL()`` and the URL accessors.

Mirrors v1.32's ``k8s.io/apiserver/pkg/cel/library/urls.go``: ``url(string)`` accepts
what Go's ``url.ParseRequestURI`` accepts (an absolute URL, or an absolute path) and
fails with ``URL parse error during conversion from string: parse "x": invalid URI for
request``; ``isURL(string)``; and the methods ``getScheme``, ``getHost`` (with the port),
``getHostname`` (without port or IPv6 brackets), ``getPort``, ``getEscapedPath`` and
``getQuery`` (a ``map(string, list(string))``). Parsing is ``api.goparseurl``; values
are ``api.celtypes`` messages. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celtypes, goparseurl
from kubeprio.api.goparseurl import ParsedUrl, UrlError

CONVERSION_ERROR: Final = "URL parse error during conversion from string: "


def _to_url(text: str) -> Any:
    try:
        goparseurl.parse_request_uri(text)
        goparseurl.parse(text)
    except UrlError as failure:
        raise ValueError(CONVERSION_ERROR + str(failure)) from None
    return celtypes.url_value(text)


def _is_url(text: str) -> bool:
    try:
        goparseurl.parse_request_uri(text)
    except UrlError:
        return False
    return True


def _parsed(value: Any) -> ParsedUrl:
    return goparseurl.parse(celtypes.carried(value))


def _accessor(part: Callable[[ParsedUrl], object]) -> Callable[[Any], object]:
    return lambda value: part(_parsed(value))


def declarations() -> list[Any]:
    """The library's function declarations, with their implementations."""
    url, string = celtypes.URL, cel.Type.STRING
    accessors: list[tuple[str, str, Any, Callable[[ParsedUrl], object]]] = [
        ("getScheme", "url_get_scheme", string, lambda u: u.scheme),
        ("getHost", "url_get_host", string, lambda u: u.host),
        ("getHostname", "url_get_hostname", string, ParsedUrl.hostname),
        ("getPort", "url_get_port", string, ParsedUrl.port),
        ("getEscapedPath", "url_get_escaped_path", string, ParsedUrl.escaped_path),
        (
            "getQuery",
            "url_get_query",
            cel.Type.Map(string, cel.Type.List(string)),
            ParsedUrl.query,
        ),
    ]
    declared = [
        cel.FunctionDecl(
            "url", [cel.Overload("string_to_url", url, [string], is_member=False, impl=_to_url)]
        ),
        cel.FunctionDecl(
            "isURL",
            [cel.Overload("is_url_string", cel.Type.BOOL, [string], is_member=False, impl=_is_url)],
        ),
    ]
    for name, overload, result, part in accessors:
        declared.append(
            cel.FunctionDecl(
                name, [cel.Overload(overload, result, [url], is_member=True, impl=_accessor(part))]
            )
        )
    return declared
