"""Content negotiation and query parameters of resource requests.

What it is: the small parsers the REST layer shares. ``negotiate`` reads an ``Accept``
header the way upstream's ``negotiation.NegotiateOutputMediaType`` does for the media types
kubeprio serves: plain JSON, or a ``meta.k8s.io`` ``Table`` (``as=Table;g=meta.k8s.io;
v=v1`` or ``v1beta1``), which kubectl asks for on every human-readable ``get``. The first
entry kubeprio can serve wins; protobuf and YAML entries are skipped, so kubectl's
``application/vnd.kubernetes.protobuf,application/json`` gets JSON.

Who drives it: ``apiserver.rest``. Rules: pure, no HTTP library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api import errors

TABLE_VERSIONS: Final = ("v1", "v1beta1")
JSON_TYPES: Final = ("application/json", "application/*", "*/*")


@dataclass(frozen=True, slots=True)
class Output:
    """How to render a read: plain JSON, or a Table of ``meta.k8s.io/<table_version>``."""

    table: bool = False
    table_version: str = "v1"

    @property
    def table_api_version(self) -> str:
        """``meta.k8s.io/v1`` (or ``v1beta1``)."""
        return f"meta.k8s.io/{self.table_version}"


PLAIN: Final = Output()


def negotiate(accept: str) -> Output:
    """Pick the output for an ``Accept`` header; 406 when nothing listed can be served."""
    if not accept.strip():
        return PLAIN
    for entry in accept.split(","):
        media, *raw_params = (part.strip() for part in entry.split(";"))
        params: dict[str, str] = {}
        for raw in raw_params:
            key, _, value = raw.partition("=")
            params[key.strip()] = value.strip()
        media = media.lower()
        if media not in JSON_TYPES:
            continue
        kind = params.get("as")
        if kind is None:
            return PLAIN
        if (
            kind == "Table"
            and params.get("g") == "meta.k8s.io"
            and params.get("v") in TABLE_VERSIONS
        ):
            return Output(table=True, table_version=params["v"])
    raise errors.StatusError.build(
        "only the following media types are accepted: application/json",
        reason="NotAcceptable",
        code=406,
    )


def flag(query: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter as upstream's parameter codec reads it.

    ``runtime.Convert_Slice_string_To_bool``: absent, ``false`` (any case) and ``0`` are
    false; anything else is true, an empty value (``?watch``) and ``yes`` included.
    """
    value = query.get(name)
    return value is not None and value != "0" and value.lower() != "false"


def integer(query: Mapping[str, str], name: str) -> int | None:
    """An integer query parameter (``limit``, ``timeoutSeconds``, ``gracePeriodSeconds``)."""
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def dry_run(query: Mapping[str, str]) -> bool:
    """``dryRun=All`` (the only value upstream accepts)."""
    value = query.get("dryRun")
    if not value:
        return False
    if value != "All":
        raise errors.bad_request(f'Invalid dry run value: "{value}"')
    return True


def media_type(content_type: str) -> str:
    """``application/json; charset=utf-8`` -> ``application/json``."""
    return content_type.split(";", 1)[0].strip().lower()
