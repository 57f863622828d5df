"""Label keys and values checked as Kubernetes does: ``IsLabelKey`` and ``IsLabelValue``.

Mirrors ``k8s.io/apimachinery/pkg/util/validation`` as in v1.32 (``IsQualifiedName``,
``IsValidLabelValue``): a key is ``[prefix/]name``, the name at most 63 bytes of
alphanumerics, ``-``, ``_`` and ``.`` starting and ending alphanumeric, the optional
prefix a DNS-1123 subdomain (``IsDNS1123Subdomain``); a value is empty or such a name.
Both return upstream's messages (``RegexError`` with its examples; ``MaxLenError``'s "must
be no more than N characters", though the limit counts UTF-8 bytes, as Go's ``len``
does — later releases reword it to "bytes"), empty when valid, memoised: a cluster repeats a few keys and
values in every object and each write checks them again.

Callers: ``api.selectors`` (selector requirements; it re-exports both functions, which
``api.validation`` wraps in field errors). Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["validate_label_key", "validate_label_value"]

_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)
_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_MAX_BYTES: Final = 63
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX_BYTES: Final = 253


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """Upstream ``content.RegexError`` with examples (note its doubled space before ``or``)."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _byte_len(text: str) -> int:
    """Go's ``len``: limits count UTF-8 bytes, not characters."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _validate_dns1123_subdomain(value: str) -> list[str]:
    """Upstream ``IsDNS1123Subdomain``."""
    errors = []
    if _byte_len(value) > _DNS1123_SUBDOMAIN_MAX_BYTES:
        errors.append(f"must be no more than {_DNS1123_SUBDOMAIN_MAX_BYTES} characters")
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errors.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def validate_label_key(key: str) -> list[str]:
    """Check a label key: ``[prefix/]name``, upstream ``IsLabelKey`` (``IsQualifiedName``).

    The name is at most 63 bytes of alphanumerics, ``-``, ``_`` and ``.`` starting and
    ending alphanumeric; the optional prefix is a DNS-1123 subdomain. Returns upstream's
    messages, empty when valid.
    """
    return list(_label_key_messages(key))


@functools.lru_cache(maxsize=4096)
def _label_key_messages(key: str) -> tuple[str, ...]:
    """``validate_label_key``, memoised: a cluster repeats a few keys in every object
    (labels, annotations, condition types), and each write validates them again."""
    parts = key.split("/")
    errors: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {m}" for m in _validate_dns1123_subdomain(prefix))
    else:
        return (
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > _LABEL_MAX_BYTES:
        errors.append(f"name part must be no more than {_LABEL_MAX_BYTES} characters")
    if _LABEL_KEY_RE.fullmatch(name) is None:
        errors.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errors)


def validate_label_value(value: str) -> list[str]:
    """Check a label value, upstream ``IsLabelValue``: empty, or a <=63-byte name."""
    return list(_label_value_messages(value))


@functools.lru_cache(maxsize=4096)
def _label_value_messages(value: str) -> tuple[str, ...]:
    """``validate_label_value``, memoised (label values repeat as keys do)."""
    errors = []
    if _byte_len(value) > _LABEL_MAX_BYTES:
        errors.append(f"must be no more than {_LABEL_MAX_BYTES} characters")
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errors.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return tuple(errors)
