"""The ``kubeprio.io/*`` annotations kubeprio reads, and their value formats.

The table is in docs/design.md ("Annotations kubeprio reads"):

* ``kubeprio.io/submit-at`` (a duration such as ``90s``): when the simulator submits
  the object;
* ``kubeprio.io/duration`` (a duration): how long a started pod runs before it exits
  successfully (``Succeeded``); without it a pod runs until it is deleted;
* ``kubeprio.io/termination-seconds`` (seconds, or a duration): how long a pod takes to
  shut down after SIGTERM; without it the pod uses its whole grace period;
* ``kubeprio.io/usage`` (``cpu=250m,memory=900Mi,ephemeral-storage=1Gi``): the resources
  a running pod actually uses, for node-pressure eviction (memory, ephemeral storage) and
  the resource metrics of ``kubectl top`` (CPU, memory); ``api.podusage`` reads it per
  container. An entry may name a container (``sidecar:memory=100Mi``); an unqualified
  entry belongs to the first app container.

Durations use Go's ``time.ParseDuration`` syntax (``300ms``, ``1.5h``, ``2h45m``), the
format Kubernetes uses for durations in its own configuration. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from kubeprio.api.quantity import Quantity, QuantityError, parse_quantity
from kubeprio.errors import KubeprioError

SUBMIT_AT: Final = "kubeprio.io/submit-at"
DURATION: Final = "kubeprio.io/duration"
TERMINATION_SECONDS: Final = "kubeprio.io/termination-seconds"
USAGE: Final = "kubeprio.io/usage"

_UNITS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,  # U+00B5 micro sign
    "μs": 1e-6,  # U+03BC Greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_TERM: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]+)")


class AnnotationError(KubeprioError, ValueError):
    """An annotation value that does not parse; the message names the annotation."""


def parse_duration(text: str) -> float:
    """Parse a Go duration (``time.ParseDuration``) into seconds.

    ``"0"`` is the only unit-less value; a sign may lead; every number needs a unit.
    """
    original = text
    if not text:
        raise AnnotationError(f'time: invalid duration "{original}"')
    sign = 1.0
    if text[0] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise AnnotationError(f'time: invalid duration "{original}"')
    total = 0.0
    pos = 0
    while pos < len(text):
        match = _TERM.match(text, pos)
        if match is None or match.group(1) in ("", "."):
            if match is not None and match.group(1) == "":
                raise AnnotationError(f'time: invalid duration "{original}"')
            raise AnnotationError(f'time: missing unit in duration "{original}"')
        number, unit = match.group(1), match.group(2)
        if unit not in _UNITS:
            raise AnnotationError(f'time: unknown unit "{unit}" in duration "{original}"')
        total += float(number) * _UNITS[unit]
        pos = match.end()
    return sign * total


def parse_seconds(text: str) -> float:
    """Parse a number of seconds (``"20"``, ``"2.5"``) or a Go duration (``"20s"``)."""
    stripped = text.strip()
    try:
        value = float(stripped)
    except ValueError:
        return parse_duration(stripped)
    if value != value or value in (float("inf"), float("-inf")):
        raise AnnotationError(f'invalid number of seconds "{text}"')
    return value


@dataclass(frozen=True, slots=True)
class UsageEntry:
    """One ``[container:]resource=quantity`` entry of ``kubeprio.io/usage``."""

    container: str | None
    resource: str
    quantity: Quantity


def parse_usage(text: str) -> tuple[UsageEntry, ...]:
    """Parse ``kubeprio.io/usage``: comma-separated ``[container:]resource=quantity``."""
    entries: list[UsageEntry] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise AnnotationError(
                f'{USAGE}: entry "{item}" is not of the form [container:]resource=quantity'
            )
        container: str | None = None
        resource = key.strip()
        if ":" in resource:
            container, _, resource = resource.partition(":")
            container = container.strip()
            resource = resource.strip()
            if not container or not resource:
                raise AnnotationError(
                    f'{USAGE}: entry "{item}" is not of the form [container:]resource=quantity'
                )
        try:
            quantity = parse_quantity(value.strip())
        except QuantityError as exc:
            raise AnnotationError(f'{USAGE}: entry "{item}": {exc}') from exc
        if quantity.sign() < 0:
            raise AnnotationError(f'{USAGE}: entry "{item}": usage must not be negative')
        entries.append(UsageEntry(container, resource, quantity))
    return tuple(entries)
