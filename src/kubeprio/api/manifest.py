"""Turning manifest text (YAML or JSON, multi-document, ``kind: List``) into API objects.

Parsing is pure: callers (``cli``, ``sim``) read the files and pass the text with a
source name, so every error can say which file and which document it is about.

Real dumps load as they are:

* timestamps stay strings: the YAML loader here drops PyYAML's implicit timestamp
  resolver, so GKE's unquoted ``creationTimestamp: 2019-08-14T21:58:26Z`` round-trips;
* list kinds (``List``, ``PodList``, ...) are expanded into their items; items without
  ``kind``/``apiVersion`` (as in API list responses) take them from the list;
* legacy API versions in the resource table (``scheduling.k8s.io/v1beta1``) decode into
  the current model with their ``apiVersion`` kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

from kubeprio.api import autoscaling, autoscalingv1, errors, kinds
from kubeprio.api.gotext import json_kind
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.errors import KubeprioError


class ManifestError(KubeprioError, ValueError):
    """Unreadable or unsupported input, located by source and document index."""

    def __init__(
        self, message: str, *, source: str, index: int | None = None, path: str = ""
    ) -> None:
        where = source if index is None else f"{source} (document {index})"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.index = index
        self.path = path
        self.detail = message


class _Loader(yaml.CSafeLoader):
    """The C safe loader without the implicit timestamp resolver (timestamps stay strings)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True, slots=True)
class Document:
    """One JSON object from a manifest, with where it came from."""

    source: str
    index: int
    data: JsonDict


def parse_text(text: str, source: str) -> list[Document]:
    """Parse YAML or JSON text into its documents, expanding list kinds."""
    raw: list[Any]
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            loaded = json.loads(text)
            raw = loaded if isinstance(loaded, list) else [loaded]
        except json.JSONDecodeError:
            raw = load_yaml(text, source)
    else:
        raw = load_yaml(text, source)
    documents: list[Document] = []
    for index, data in enumerate(raw):
        if data is None:
            continue
        if not isinstance(data, dict):
            raise ManifestError(
                f"expected a mapping (an object), got {type(data).__name__}",
                source=source,
                index=index,
            )
        documents.extend(Document(source, index, item) for item in expand_list(data, source, index))
    return documents


def load_yaml(text: str, source: str) -> list[Any]:
    """Every YAML document in ``text`` as it loads (a document of any type; an empty one
    is None); bad YAML is a ``ManifestError``."""
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}", source=source) from exc


def expand_list(data: JsonDict, source: str, index: int) -> list[JsonDict]:
    """Return the items of a list kind (``List``, ``PodList``), or ``[data]`` for an object."""
    kind = data.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in data):
        return [data]
    items = data["items"]
    if items is None:
        return []
    if not isinstance(items, list):
        raise ManifestError("items of a list must be an array", source=source, index=index)
    item_kind = kind[: -len("List")] if kind != "List" else None
    expanded: list[JsonDict] = []
    for item in items:
        if not isinstance(item, dict):
            raise ManifestError("list items must be objects", source=source, index=index)
        if item_kind and "kind" not in item:
            item = {"apiVersion": data.get("apiVersion"), "kind": item_kind, **item}
        expanded.extend(expand_list(item, source, index))
    return expanded


def decode_object(data: JsonDict) -> object:
    """Decode one JSON object into its model; raise ``UnknownKindError`` or ``DecodeError``."""
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        raise kinds.UnknownKindError(f"Object 'Kind' is missing in '{json.dumps(data)[:200]}'")
    if not isinstance(api_version, str) or not api_version:
        raise kinds.UnknownKindError(
            f"Object 'apiVersion' is missing in '{json.dumps(data)[:200]}'"
        )
    if (api_version, kind) == (autoscaling.V1, "HorizontalPodAutoscaler"):
        # autoscaling/v1 (what older clusters dump) converts as upstream's API server would.
        data = autoscalingv1.from_v1(data)
        api_version = autoscaling.V2
    elif (api_version, kind) == (autoscalingv1.V2BETA1, "HorizontalPodAutoscaler"):
        data = autoscalingv1.from_v2beta1(data)
        api_version = autoscaling.V2
    info = kinds.for_kind(api_version, kind)
    return from_dict(info.model, data)


def decode_document(document: Document) -> object:
    """Decode a document, turning failures into a located ``ManifestError``."""
    try:
        return decode_object(document.data)
    except kinds.UnknownKindError as exc:
        raise ManifestError(str(exc), source=document.source, index=document.index) from exc
    except DecodeError as exc:
        raise ManifestError(
            f"{exc.message} (field {exc.path})" if exc.path else exc.message,
            source=document.source,
            index=document.index,
            path=exc.path,
        ) from exc


def decode_failure_status(
    exc: DecodeError | kinds.UnknownKindError, data: object, *, expected_kind: str | None = None
) -> errors.BadRequestError:
    """The 400 BadRequest an API server answers when a request body does not decode.

    Mirrors ``transformDecodeError`` (``apiserver/pkg/endpoints/handlers/rest.go``): with
    the body's kind known the message is ``<Kind> in version "<version>" cannot be
    handled as a <Kind>: <decoder error>``, where the decoder error names the Go struct
    field (``json: cannot unmarshal number 3000000000 into Go struct field
    PriorityClass.value of type int32``); otherwise it is the decoder error alone
    (``Object 'Kind' is missing in '...'``). ``expected_kind`` is the kind the endpoint
    serves, when it differs from the body's.
    """
    detail = exc.message if isinstance(exc, DecodeError) else str(exc.args[0] if exc.args else exc)
    kind = data.get("kind") if isinstance(data, dict) else None
    api_version = data.get("apiVersion") if isinstance(data, dict) else None
    if isinstance(kind, str) and kind and isinstance(api_version, str):
        version = api_version.rsplit("/", 1)[-1]
        detail = f'{kind} in version "{version}" cannot be handled as a {expected_kind or kind}: {detail}'
    return errors.bad_request(detail)


def decode_request(data: object, *, expected_kind: str | None = None) -> object:
    """Decode one JSON object as the API server's body decoder does; failures raise 400.

    Unknown kinds and versions, missing ``kind``/``apiVersion``, type mismatches and
    int32 overflows all become a ``BadRequestError`` (see ``decode_failure_status``);
    nothing is stored because nothing got past decoding.
    """
    if not isinstance(data, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(data)} into Go value of type map[string]interface {{}}"
        )
    try:
        return decode_object(data)
    except (DecodeError, kinds.UnknownKindError) as exc:
        raise decode_failure_status(exc, data, expected_kind=expected_kind) from exc
