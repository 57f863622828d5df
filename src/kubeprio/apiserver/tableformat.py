"""The building blocks of server-side Tables: column definitions, NAME and AGE, HumanDuration.

What every printer shares (``apiserver.tables`` for most kinds, ``apiserver.configtables``
for ConfigMaps, Secrets and ServiceAccounts): ``Column`` (a ``TableColumnDefinition``),
the NAME and AGE columns with upstream's descriptions (``metav1.ObjectMeta``'s swagger
docs, as ``printers.go`` uses them), and ``HumanDuration`` from
``staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go`` for AGE cells. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api import selectors
from kubeprio.api.meta import LabelSelector
from kubeprio.api.model import JsonDict
from kubeprio.clock import parse_rfc3339

NONE: Final = "<none>"
UNKNOWN: Final = "<unknown>"

NAME_DOC: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DOC: Final = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is "
    "in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


@dataclass(frozen=True, slots=True)
class Column:
    """A ``TableColumnDefinition``."""

    name: str
    type: str
    description: str
    priority: int = 0
    format: str = ""

    def to_json(self) -> JsonDict:
        """The wire form."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


Cells = list[Any]
RowConditions = list[JsonDict] | None
Printer = Callable[[Any, float], tuple[Cells, RowConditions]]


def name_column() -> Column:
    """NAME, upstream's first column of every kind."""
    return Column("Name", "string", NAME_DOC, format="name")


def age_column() -> Column:
    """AGE: the time since ``creationTimestamp``."""
    return Column("Age", "string", AGE_DOC)


# --- durations (apimachinery/pkg/util/duration) --------------------------------------------


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ``45s``, ``5m3s``, ``3h5m``, ``2d4h``, ``3y20d``."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60 * 2:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def since(timestamp: str | None, now: float) -> str:
    """``translateTimestampSince``: ``<unknown>`` for no timestamp, else the age."""
    if not timestamp:
        return UNKNOWN
    try:
        return human_duration(now - parse_rfc3339(timestamp))
    except ValueError:
        return UNKNOWN


def selector_string(selector: LabelSelector | None) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` when empty, ``<error>`` when invalid."""
    if selector is None:
        return NONE
    try:
        text = str(selectors.label_selector_as_selector(selector))
    except selectors.SelectorError:
        return "<error>"
    return text or NONE
