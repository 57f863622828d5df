"""Kubernetes' CEL ``format`` library: named string formats and their validation.

Mirrors ``k8s.io/apiserver/pkg/cel/library/format.go``, which v1.32's base environment
adds at compatibility version 1.31 (``pkg/cel/environment/base.go``; v1.32 compiles new
expressions at 1.31, so the library is there for policies and CRD rules alike):

* ``format.named(name) -> optional<kubernetes.NamedFormat>``: ``optional.none()`` for an
  unknown name;
* ``format.dns1123Label()``, ``format.dns1123Subdomain()``, ``format.dns1035Label()``,
  ``format.qualifiedName()``, ``format.dns1123LabelPrefix()``,
  ``format.dns1123SubdomainPrefix()``, ``format.dns1035LabelPrefix()``,
  ``format.labelValue()``, ``format.uri()``, ``format.uuid()``, ``format.byte()``,
  ``format.date()``, ``format.datetime()`` (upstream's ``ConstantFormats``);
* ``<NamedFormat>.validate(text) -> optional<list<string>>``: ``optional.none()`` when
  ``text`` is valid, else the validator's messages (upstream's words: the apimachinery
  name and label validators, ``url.ParseRequestURI``'s error, ``does not match the UUID
  format``, ``invalid base64``, ``invalid date``, ``invalid datetime``, with kube-openapi
  ``strfmt``'s rules).

A Python function cannot return a CEL optional, so the checker declares upstream's
overloads and ``api.celcheckedast`` rewrites the two optional-returning calls into
``optional.ofNonZeroValue`` of a helper (``kubeprio.formatNamed``: the format, or an
empty one for an unknown name; ``kubeprio.formatErrors``: the messages, empty when
valid). A format is a ``kubernetes.NamedFormat`` message (``api.celtypes``) holding its
name, so ``==`` compares names as upstream's ``Format.Equal``. Pure: no I/O.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celenv, celtypes, goparseurl
from kubeprio.api.celcheckedast import OptionalResult
from kubeprio.api.labelvalidation import validate_label_key, validate_label_value

_UUID: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.IGNORECASE
)
_BASE64: Final = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
)
_FULL_DATE: Final = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
_TIME_OF_DAY: Final = re.compile(
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
)


def name_rules() -> ModuleType:
    """``api.validation.meta`` (the DNS name rules), imported on first use: the
    validation package compiles admission policies with ``api.celexpr``, which loads
    this library."""
    from kubeprio.api.validation import meta

    return meta


def _uri_errors(text: str) -> list[str]:
    try:
        goparseurl.parse_request_uri(text)
    except goparseurl.UrlError as failure:
        return [str(failure)]
    return []


def _is_base64(text: str) -> bool:
    """govalidator ``IsBase64``: a pattern, not a decoder."""
    return _BASE64.match(text) is not None


def _is_date(text: str) -> bool:
    """strfmt ``IsDate``: Go's ``time.Parse("2006-01-02", s)`` (the day checked against
    its month)."""
    found = _FULL_DATE.match(text)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups())
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    """strfmt ``IsDateTime``: a date, ``T``, then a time of day with a zone."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    found = _TIME_OF_DAY.match(parts[1])
    if found is None:
        return False
    return found.group(1) <= "23" and found.group(2) <= "59" and found.group(3) <= "59"


def _failing(test: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if test(text) else [message]


VALIDATORS: Final[dict[str, Callable[[str], list[str]]]] = {
    "dns1123Label": lambda text: name_rules().name_is_dns_label(text, False),
    "dns1123Subdomain": lambda text: name_rules().name_is_dns_subdomain(text, False),
    "dns1035Label": lambda text: name_rules().name_is_dns1035_label(text, False),
    "qualifiedName": validate_label_key,
    "dns1123LabelPrefix": lambda text: name_rules().name_is_dns_label(text, True),
    "dns1123SubdomainPrefix": lambda text: name_rules().name_is_dns_subdomain(text, True),
    "dns1035LabelPrefix": lambda text: name_rules().name_is_dns1035_label(text, True),
    "labelValue": validate_label_value,
    "uri": _uri_errors,
    "uuid": _failing(lambda text: bool(_UUID.match(text)), "does not match the UUID format"),
    "byte": _failing(_is_base64, "invalid base64"),
    "date": _failing(_is_date, "invalid date"),
    "datetime": _failing(_is_datetime, "invalid datetime"),
}
"""Upstream's ``ConstantFormats``, by the name ``format.named`` takes."""

NAMED_HELPER: Final = "kubeprio.formatNamed"
ERRORS_HELPER: Final = "kubeprio.formatErrors"

REWRITES: Final[tuple[OptionalResult, ...]] = (
    OptionalResult("format-named", NAMED_HELPER, "kubeprio_format_named", member=False),
    OptionalResult("format-validate", ERRORS_HELPER, "kubeprio_format_errors", member=True),
)
"""The optional-returning overloads and the helpers they run as (``api.celcheckedast``)."""


def _named(name: str) -> Any:
    return celtypes.named_format_value(name if name in VALIDATORS else "")


def _errors(named: Any, text: str) -> list[str]:
    validator = VALIDATORS.get(celtypes.carried(named))
    if validator is None:
        raise ValueError(celenv.NO_SUCH_OVERLOAD)
    return validator(text)


def _constant(name: str) -> Callable[[], Any]:
    return lambda: celtypes.named_format_value(name)


def declarations() -> list[Any]:
    """The library's declarations: upstream's, and the two helpers the rewritten calls
    run as."""
    named, string = celtypes.NAMED_FORMAT, cel.Type.STRING
    errors = cel.Type.List(string)
    return [
        cel.FunctionDecl(
            "format.named",
            [
                cel.Overload(
                    "format-named",
                    cel.Type.AbstractType("optional_type", [named]),
                    [string],
                    is_member=False,
                )
            ],
        ),
        cel.FunctionDecl(
            "validate",
            [
                cel.Overload(
                    "format-validate",
                    cel.Type.AbstractType("optional_type", [errors]),
                    [named, string],
                    is_member=True,
                )
            ],
        ),
        *(
            cel.FunctionDecl(
                f"format.{name}",
                [cel.Overload(f"format.{name}", named, [], is_member=False, impl=_constant(name))],
            )
            for name in VALIDATORS
        ),
        cel.FunctionDecl(
            NAMED_HELPER,
            [cel.Overload("kubeprio_format_named", named, [string], is_member=False, impl=_named)],
        ),
        cel.FunctionDecl(
            ERRORS_HELPER,
            [
                cel.Overload(
                    "kubeprio_format_errors", errors, [named, string], is_member=False, impl=_errors
                )
            ],
        ),
    ]
