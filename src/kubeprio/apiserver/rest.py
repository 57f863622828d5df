"""The REST verbs over ``ApiService``: one request in, one reply (or a watch stream) out.

What it is: everything the HTTP adapter does between routing and writing bytes, kept free
of the HTTP library so it is easy to read and test. It mirrors upstream's handlers in
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers`` (``create.go``, ``update.go``,
``patch.go``, ``delete.go``, ``get.go``/``watch.go``) for what kubectl and the Python
client send (shared/reference/kubectl-wire.md):

* bodies: JSON (YAML and Kubernetes protobuf, ``apiserver.protobuf``, accepted), strict
  field validation (``apiserver.fieldvalidation``),
  decode failures as 400 ``Pod in version "v1" cannot be handled as a Pod: ...``; the URL's
  namespace fills an empty ``metadata.namespace`` and a different one is a 400;
* create answers 201, ``dryRun=All`` writes nothing; update is PUT; PATCH takes the four
  content types, and an apply patch (``application/apply-patch+yaml``) of an absent object
  creates it (201); DELETE reads a ``DeleteOptions`` body whatever its content type and
  answers with the object (pods, or anything still terminating) or a success Status;
* subresources ``status``, ``pods/ephemeralcontainers`` (a Pod in and out, like
  ``status``), ``scale`` (autoscaling/v1 ``Scale``), ``pods/binding`` and
  ``pods/eviction`` (201 with a success Status), ``serviceaccounts/token`` (201 with the
  TokenRequest and its token, ``apiserver.tokenrequest``);
* reads as plain JSON or as a server-side ``Table`` (``apiserver.tables``);
* the read-only resource metrics (``metrics.k8s.io``), handed to ``apiserver.resourcemetrics``.

Admission warnings travel in ``Reply.warnings`` (the adapter writes ``Warning`` headers).
Errors are raised as ``api.errors.StatusError``; ``apiserver.status`` renders them.

Who drives it: ``apiserver.http``. Rules: no HTTP imports; calls into ``ApiService``
synchronously (the adapter runs it on the event loop, never in worker threads).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from kubeprio.admission.chain import UserInfo
from kubeprio.api import autoscalingv1, errors, gojson
from kubeprio.api.apps import Scale
from kubeprio.api.core import Binding, Pod
from kubeprio.api.encoded import json_fragment
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS, ResourceInfo
from kubeprio.api.manifest import ManifestError, load_yaml
from kubeprio.api.meta import DeleteOptions
from kubeprio.api.model import JsonDict
from kubeprio.api.patch import PatchError, PatchType, apply_patch
from kubeprio.api.policy import Eviction
from kubeprio.api.reviews import AUTHENTICATION_V1, TokenReview
from kubeprio.api.serialization import DecodeError, from_dict, to_dict
from kubeprio.api.tokenrequest import TokenRequest, default_token_request
from kubeprio.apiserver import (
    decodeerrors,
    fieldvalidation,
    podlogs,
    podstreams,
    protobuf,
    resourcemetrics,
    reviews,
    status,
    tables,
    tokenrequest,
    tokenreview,
)
from kubeprio.apiserver.authz import ReviewingAuthorizer
from kubeprio.apiserver.fieldvalidation import FieldValidation
from kubeprio.apiserver.negotiation import dry_run, flag, integer, media_type, negotiate
from kubeprio.apiserver.routes import Target
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.client.protocol import DeleteRequest
from kubeprio.clock import Clock

DEFAULT_WATCH_TIMEOUT: Final = 1800.0
"""Upstream's ``--min-request-timeout``: a watch without ``timeoutSeconds`` lasts this long."""

RETURNS_DELETED_OBJECT: Final = frozenset({"pods", "services"})
"""Registries with ``ReturnDeletedObject: true`` (``pkg/registry/core/pod`` and
``core/service`` storage); others answer a deletion with a Status."""

PATCH_MEDIA_TYPES: Final = {member.value: member for member in PatchType}
JSON_TYPE: Final = "application/json"
YAML_TYPE: Final = "application/yaml"
OBJECT_MEDIA_TYPES: Final = (JSON_TYPE, YAML_TYPE, protobuf.CONTENT_TYPE)
"""What upstream decodes an object body from (CBOR is behind a feature gate in 1.32)."""


CONVERSIONS: Final[
    dict[str, tuple[Callable[[JsonDict], JsonDict], Callable[[JsonDict], JsonDict]]]
] = {
    "HorizontalPodAutoscaler@v1": (autoscalingv1.to_v1, autoscalingv1.from_v1),
}
"""Versions served by conversion (``api.kinds.ALTERNATE_VERSIONS``), by schema key: (from
the stored version's JSON, to it)."""


def object_body(
    info: ResourceInfo, obj: Any, *, remember: bool = True
) -> JsonDict | orjson.Fragment:
    """A stored object as the request's version answers it: its shared encoding, or, at a
    version served by conversion, the converted document."""
    if info.storage_version:
        return CONVERSIONS[info.schema_key][0](to_dict(obj))
    return json_fragment(obj, remember=remember)


def _to_storage(info: ResourceInfo, data: JsonDict) -> JsonDict:
    """A request body at a version served by conversion, as the stored version's JSON."""
    if info.storage_version and isinstance(data, dict):
        return CONVERSIONS[info.schema_key][1](data)
    return data


@dataclass(frozen=True, slots=True)
class RestRequest:
    """A resource request, as the adapter parsed it."""

    method: str
    target: Target
    query: Mapping[str, str]
    accept: str = ""
    content_type: str = ""
    body: bytes = b""
    user: UserInfo | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A JSON answer: status code, body, admission warnings.

    A single stored object travels as an ``orjson.Fragment`` of its shared encoding
    (``api.encoded``): the write that stored it, or another reader, already encoded it."""

    code: int
    body: JsonDict | orjson.Fragment
    warnings: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class TextReply:
    """A plain-text answer (``pods/log``)."""

    body: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class LogFollow:
    """A followed log of a running container: the stream stays open while it runs."""

    namespace: str
    name: str
    uid: str
    container: str


def _unsupported_media_type(accepted: Iterable[str]) -> errors.StatusError:
    """Upstream's 415 for a body of a media type the endpoint does not take."""
    return errors.UnsupportedMediaTypeError.build(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )


class RestHandler:
    """Serves resource requests against one ``ApiService``."""

    def __init__(
        self,
        service: ApiService,
        *,
        clock: Clock,
        watch_timeout: float = DEFAULT_WATCH_TIMEOUT,
        reviewer: ReviewingAuthorizer,
        token_issuer: tokenrequest.TokenIssuer | None = None,
        token_reviewer: tokenreview.TokenReviewAuthenticator | None = None,
        pods_on_node: resourcemetrics.PodsOnNode | None = None,
    ) -> None:
        self.service = service
        self.clock = clock
        self.watch_timeout = watch_timeout
        self.reviewer = reviewer
        self.token_issuer = token_issuer
        self.token_reviewer = token_reviewer
        self.resource_metrics = resourcemetrics.ResourceMetricsApi(
            service.store, clock=clock, pods_on_node=pods_on_node
        )

    # --- dispatch ------------------------------------------------------------------------

    def handle(self, request: RestRequest) -> Reply | WatchStream | TextReply | LogFollow:
        """Serve one request; raise ``StatusError`` for failures."""
        target = request.target
        method = request.method
        sub = target.subresource
        if target.info.model in reviews.MODELS:
            # Create-only and never stored: no object paths, no other verbs.
            if not target.is_collection:
                raise status.path_not_found()
            if method == "POST":
                return self.review(request)
            raise status.method_not_allowed()
        if target.info.model in resourcemetrics.MODELS:
            # Computed on request and read-only (metrics.k8s.io, ``kubectl top``).
            return Reply(
                200,
                self.resource_metrics.handle(method, target, request.query, request.accept),
            )
        if sub == "":
            if target.is_collection:
                if method == "GET":
                    if flag(request.query, "watch"):
                        return self.watch(request)
                    return self.list_collection(request)
                if method == "POST" and (
                    target.namespace is not None or not target.info.namespaced
                ):
                    return self.create(request)
                if method == "DELETE":
                    return self.delete_collection(request)
            else:
                if method == "GET":
                    return self.get(request)
                if method == "PUT":
                    return self.update(request)
                if method == "PATCH":
                    return self.patch(request)
                if method == "DELETE":
                    return self.delete(request)
        elif sub in ("status", EPHEMERAL_CONTAINERS):
            # pods/ephemeralcontainers reads and writes a whole Pod, as status does.
            if method == "GET":
                return self.get(request)
            if method == "PUT":
                return self.update(request)
            if method == "PATCH":
                return self.patch(request)
        elif sub == "scale":
            if method == "GET":
                return self.get_scale(request)
            if method in ("PUT", "PATCH"):
                return self.write_scale(request)
        elif sub == "binding" and method == "POST":
            return self.bind(request)
        elif sub == "eviction" and method == "POST":
            return self.evict(request)
        elif sub == "token" and method == "POST":
            return self.create_token(request)
        elif sub == "log" and method == "GET":
            return self.logs(request)
        elif sub in podstreams.STREAMS and method in ("GET", "POST"):
            return self.stream(request)
        raise status.method_not_allowed()

    def logs(self, request: RestRequest) -> TextReply | LogFollow:
        """``pods/log`` (see ``podlogs``): options first, then the pod, its container and
        what its kubelet would answer. Simulated containers print nothing."""
        target = request.target
        options = podlogs.parse_options(request.query, target.name)
        pod: Pod = self.service.get(Pod, target.name, target.namespace)
        container = podlogs.container_for(pod, options.container)
        if not (pod.spec and pod.spec.node_name):
            # Upstream's LogLocation: no node yet, an empty log.
            return TextReply(b"")
        podlogs.check_kubelet_answer(pod, container, previous=options.previous)
        if options.follow and not options.previous and podlogs.is_running(pod, container):
            return LogFollow(target.namespace or "", target.name, pod.metadata.uid or "", container)
        return TextReply(b"")

    def stream(self, request: RestRequest) -> Reply:
        """``pods/exec``, ``pods/attach``, ``pods/portforward`` (see ``podstreams``)."""
        target = request.target
        pod: Pod = self.service.get(Pod, target.name, target.namespace)
        container = request.query.get("container") or ""
        raise podstreams.refuse(pod, target.subresource or "", container)

    # --- reads ---------------------------------------------------------------------------

    def _include(self, request: RestRequest) -> tables.IncludeObject:
        value = request.query.get("includeObject") or tables.IncludeObject.METADATA.value
        try:
            return tables.IncludeObject(value)
        except ValueError:
            raise errors.bad_request(f"unsupported includeObject value {value!r}") from None

    def get(self, request: RestRequest) -> Reply:
        """GET one object, as JSON or as a one-row Table."""
        target = request.target
        output = negotiate(request.accept)
        obj = self.service.get(target.info.model, target.name, target.namespace)
        if output.table:
            table = tables.build_table(
                target.info.model,
                [obj],
                now=self.clock.now(),
                resource_version=obj.metadata.resource_version,
                include=self._include(request),
                api_version=output.table_api_version,
            )
            return Reply(200, table)
        return Reply(200, object_body(target.info, obj))

    def list_collection(self, request: RestRequest) -> Reply:
        """GET a collection with selectors and ``limit``/``continue``."""
        target = request.target
        query = request.query
        output = negotiate(request.accept)
        result = self.service.list(
            target.info.model,
            target.namespace,
            label_selector=query.get("labelSelector") or None,
            field_selector=query.get("fieldSelector") or None,
            limit=integer(query, "limit"),
            continue_token=query.get("continue") or None,
        )
        if output.table:
            table = tables.build_table(
                target.info.model,
                result.items,
                now=self.clock.now(),
                resource_version=result.resource_version,
                include=self._include(request),
                continue_token=result.continue_token,
                api_version=output.table_api_version,
            )
            return Reply(200, table)
        metadata: JsonDict = {"resourceVersion": result.resource_version}
        if result.continue_token:
            metadata["continue"] = result.continue_token
        if result.remaining_item_count is not None:
            metadata["remainingItemCount"] = result.remaining_item_count
        info = target.info
        return Reply(
            200,
            {
                "kind": f"{info.kind}List",
                "apiVersion": info.api_version,
                "metadata": metadata,
                "items": [object_body(info, item, remember=False) for item in result.items],
            },
        )

    def watch(self, request: RestRequest) -> WatchStream:
        """``?watch=true``: a stream of events after ``resourceVersion``."""
        target = request.target
        query = request.query
        output = negotiate(request.accept)
        timeout = integer(query, "timeoutSeconds")
        include = self._include(request)
        try:
            service_watch = self.service.watch(
                target.info.model,
                target.namespace,
                resource_version=query.get("resourceVersion") or None,
                label_selector=query.get("labelSelector") or None,
                field_selector=query.get("fieldSelector") or None,
            )
        except errors.GoneError as exc:
            return WatchStream.failed(exc, model=target.info.model, clock=self.clock)
        return WatchStream(
            service_watch,
            model=target.info.model,
            output=output,
            clock=self.clock,
            current_revision=self.service.store.current_revision,
            include=include,
            bookmarks=flag(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout and timeout > 0 else self.watch_timeout,
            encode=(lambda obj: object_body(target.info, obj))
            if target.info.storage_version
            else None,
        )

    # --- decoding ------------------------------------------------------------------------

    def _parse_body(self, request: RestRequest, kind: str) -> tuple[Any, list[str]]:
        """The decoded object body (of a ``kind``) and its duplicate-key problems: JSON
        (also without a Content-Type, as upstream takes the first supported type), YAML or
        protobuf; anything else is upstream's 415. A body whose version and kind cannot be
        read is upstream's 400 (``apiserver.decodeerrors``)."""
        content_type = media_type(request.content_type)
        if content_type == YAML_TYPE:
            data: Any = _parse_yaml(request.body)
            duplicates: list[str] = []
        elif content_type == protobuf.CONTENT_TYPE:
            return protobuf.decode(request.body), []
        elif content_type not in ("", JSON_TYPE):
            raise _unsupported_media_type(OBJECT_MEDIA_TYPES)
        else:
            data, duplicates = _parse_json(request.body, kind)
        cause = decodeerrors.interpret_cause(data)
        if cause is not None:
            raise decodeerrors.unrecognized(kind, cause, request.body)
        # A null body reads as an empty object, as Go unmarshals null into one.
        return ({} if data is None else data), duplicates

    def _read_object(
        self,
        request: RestRequest,
        model: type[Any],
        *,
        expect_name: bool,
        api_version: str | None = None,
    ) -> tuple[Any, list[str]]:
        """Decode the body of a create or update into ``model`` (the target's kind)."""
        info = request.target.info
        expected = api_version or info.api_version
        kind = model.__name__
        version = expected.rsplit("/", 1)[-1]
        cannot = f'{kind} in version "{version}" cannot be handled as a {kind}'
        data, duplicates = self._parse_body(request, kind)
        converted = model is info.model and bool(info.storage_version)
        data, warnings = self._validate_fields(
            request,
            info.schema_key if converted else kind,
            data,
            duplicates,
            prefix=f"{cannot}: ",
        )
        given = data.get("apiVersion")
        if given and given != expected:
            raise errors.bad_request(
                f"the API version in the data ({given}) does not match the expected "
                f"API version ({expected})"
            )
        if data.get("kind") and data["kind"] != kind:
            raise errors.bad_request(
                f"{cannot}: the object provided is unrecognized (must be of type {kind})"
            )
        data = self._fill_metadata(request, data, expect_name=expect_name)
        if converted:
            data = _to_storage(info, data)
        try:
            obj = from_dict(model, data)
        except DecodeError as exc:
            raise errors.bad_request(f"{cannot}: {exc.message}") from exc
        return obj, warnings

    def _validate_fields(
        self,
        request: RestRequest,
        kind: str,
        data: JsonDict,
        duplicates: list[str],
        *,
        prefix: str,
        patch: bool = False,
    ) -> tuple[JsonDict, list[str]]:
        mode = FieldValidation.parse(request.query.get("fieldValidation"))
        pruned, unknown = fieldvalidation.check(kind, data, patch=patch)
        problems = fieldvalidation.strict_problems(duplicates, unknown)
        if not problems:
            return data, []
        if mode is FieldValidation.STRICT:
            raise errors.bad_request(prefix + fieldvalidation.strict_error(problems))
        return pruned, problems if mode is FieldValidation.WARN else []

    def _fill_metadata(
        self, request: RestRequest, data: JsonDict, *, expect_name: bool
    ) -> JsonDict:
        target = request.target
        metadata = data.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            return data  # the decoder reports the type error
        metadata = dict(metadata)
        namespace = metadata.get("namespace") or ""
        if target.info.namespaced:
            if namespace and target.namespace and namespace != target.namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            metadata["namespace"] = target.namespace or namespace
        else:
            metadata.pop("namespace", None)
        if expect_name:
            name = metadata.get("name") or ""
            if name != target.name:
                raise errors.bad_request(
                    f"the name of the object ({name}) does not match the name on the URL "
                    f"({target.name})"
                )
        return {**data, "metadata": metadata}

    # --- writes --------------------------------------------------------------------------

    def create(self, request: RestRequest) -> Reply:
        """POST a new object: 201 with the stored object."""
        obj, warnings = self._read_object(request, request.target.info.model, expect_name=False)
        result = self.service.create_object(obj, user=request.user, dry_run=dry_run(request.query))
        return Reply(
            201, object_body(request.target.info, result.obj), (*warnings, *result.warnings)
        )

    def review(self, request: RestRequest) -> Reply:
        """POST a self review: 201 with the answer in its status (nothing is stored)."""
        obj, warnings = self._read_object(request, request.target.info.model, expect_name=False)
        if isinstance(obj, TokenReview):
            body = tokenreview.answer(obj, self.token_reviewer)
        else:
            body = reviews.answer(
                obj,
                request.user,
                self.reviewer,
                now=self.clock.now(),
                namespace=request.target.namespace,
            )
        return Reply(201, body, tuple(warnings))

    def update(self, request: RestRequest) -> Reply:
        """PUT an object (or its status): 200 with the stored object."""
        target = request.target
        obj, warnings = self._read_object(request, target.info.model, expect_name=True)
        result = self.service.update_object(
            obj,
            subresource=target.subresource,
            user=request.user,
            dry_run=dry_run(request.query),
        )
        return Reply(200, object_body(target.info, result.obj), (*warnings, *result.warnings))

    def _patch_type(self, request: RestRequest) -> PatchType:
        content_type = media_type(request.content_type)
        patch_type = PATCH_MEDIA_TYPES.get(content_type)
        if patch_type is None:
            raise _unsupported_media_type(PATCH_MEDIA_TYPES)
        return patch_type

    def patch(self, request: RestRequest) -> Reply:
        """PATCH an object (or its status) with one of the four patch types."""
        target = request.target
        info = target.info
        patch_type = self._patch_type(request)
        if patch_type is PatchType.APPLY_PATCH:
            body, duplicates = self._parse_apply_body(request)
        else:
            body, duplicates = _parse_json(request.body)
        warnings: list[str] = []
        if info.storage_version:
            return self._patch_converted(request, body, patch_type)
        if isinstance(body, dict) and patch_type is not PatchType.JSON_PATCH:
            body, warnings = self._validate_fields(
                request,
                info.kind,
                body,
                duplicates,
                prefix="",
                patch=patch_type is not PatchType.MERGE_PATCH,
            )
        try:
            result = self.service.patch_object(
                info.model,
                target.name,
                body,
                namespace=target.namespace,
                patch_type=patch_type,
                subresource=target.subresource,
                user=request.user,
                dry_run=dry_run(request.query),
            )
        except errors.NotFoundError:
            if patch_type is not PatchType.APPLY_PATCH or target.subresource:
                raise
            return self._apply_create(request, body, warnings)
        return Reply(200, json_fragment(result.obj), (*warnings, *result.warnings))

    def _patch_converted(self, request: RestRequest, body: Any, patch_type: PatchType) -> Reply:
        """A patch at a version served by conversion applies to that version's view of the
        object (as upstream patches the object converted to the request's version), which
        is then converted back and stored with the object's resourceVersion."""
        target = request.target
        info = target.info
        current = self.service.get(info.model, target.name, target.namespace)
        view = object_body(info, current)
        assert isinstance(view, dict)
        try:
            patched = apply_patch(view, body, patch_type=patch_type, kind=info.kind)
            patched["metadata"] = {
                **(patched.get("metadata") or {}),
                "resourceVersion": current.metadata.resource_version,
            }
            obj = from_dict(info.model, _to_storage(info, patched))
        except PatchError as exc:
            raise errors.bad_request(str(exc)) from exc
        except DecodeError as exc:
            raise errors.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                f"{exc.message}"
            ) from exc
        result = self.service.update_object(
            obj,
            subresource=target.subresource,
            user=request.user,
            dry_run=dry_run(request.query),
        )
        return Reply(200, object_body(info, result.obj), tuple(result.warnings))

    def _parse_apply_body(self, request: RestRequest) -> tuple[Any, list[str]]:
        """An apply body: JSON (what kubectl sends) or YAML."""
        try:
            return fieldvalidation.parse_json(request.body)
        except (ValueError, UnicodeDecodeError):
            return _parse_yaml(request.body), []

    def _apply_create(self, request: RestRequest, body: object, warnings: list[str]) -> Reply:
        """Server-side apply of an absent object creates it (upstream: 201 Created)."""
        info = request.target.info
        if not isinstance(body, dict):
            raise errors.bad_request(_type_error(body, info.kind))
        data = self._fill_metadata(request, body, expect_name=True)
        try:
            obj = from_dict(info.model, data)
        except DecodeError as exc:
            raise errors.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                f"{exc.message}"
            ) from exc
        result = self.service.create_object(obj, user=request.user, dry_run=dry_run(request.query))
        return Reply(201, json_fragment(result.obj), (*warnings, *result.warnings))

    def _delete_options(self, request: RestRequest) -> DeleteRequest:
        options = DeleteOptions()
        if request.body.strip():
            # Upstream's DeleteResource hands the decoder's error to scope.err as it is: a
            # plain Go error, so a malformed or mistyped body is a 500 with no reason
            # (``Error from server: json: ...``), not the 400 bodies of other verbs get.
            try:
                data = json.loads(request.body)
            except ValueError as exc:
                raise errors.plain_error(gojson.syntax_error(request.body) or str(exc)) from exc
            try:
                options = from_dict(DeleteOptions, data)
            except DecodeError as exc:
                raise errors.plain_error(exc.message) from exc
        query = request.query
        grace = integer(query, "gracePeriodSeconds")
        if grace is None:
            grace = options.grace_period_seconds
        propagation = query.get("propagationPolicy") or options.propagation_policy
        if options.orphan_dependents and not propagation:
            propagation = "Orphan"
        is_dry_run = dry_run(query) or bool(options.dry_run and "All" in options.dry_run)
        return DeleteRequest(
            grace_period_seconds=grace,
            preconditions=options.preconditions,
            propagation_policy=propagation,
            dry_run=is_dry_run,
        )

    def delete(self, request: RestRequest) -> Reply:
        """DELETE an object: the object while it terminates, else a success Status."""
        target = request.target
        info = target.info
        options = self._delete_options(request)
        obj = self.service.delete_object(
            info.model, target.name, target.namespace, options=options, user=request.user
        )
        if options.dry_run or info.plural in RETURNS_DELETED_OBJECT or self._exists(target):
            return Reply(200, object_body(info, obj))
        return Reply(
            200, status.deleted_status(target.name, info.group, info.plural, obj.metadata.uid)
        )

    def _exists(self, target: Target) -> bool:
        try:
            self.service.get(target.info.model, target.name, target.namespace)
        except errors.NotFoundError:
            return False
        return True

    def delete_collection(self, request: RestRequest) -> Reply:
        """DELETE a collection: every selected object, answered as a list of them."""
        target = request.target
        info = target.info
        if "deletecollection" not in info.verbs:
            raise status.method_not_allowed()
        options = self._delete_options(request)
        result = self.service.list(
            info.model,
            target.namespace,
            label_selector=request.query.get("labelSelector") or None,
            field_selector=request.query.get("fieldSelector") or None,
        )
        deleted = []
        for item in result.items:
            try:
                deleted.append(
                    self.service.delete_object(
                        info.model,
                        item.metadata.name or "",
                        item.metadata.namespace,
                        options=options,
                        user=request.user,
                    )
                )
            except errors.NotFoundError:
                continue
        return Reply(
            200,
            {
                "kind": f"{info.kind}List",
                "apiVersion": info.api_version,
                "metadata": {"resourceVersion": str(self.service.store.current_revision())},
                "items": [object_body(info, obj) for obj in deleted],
            },
        )

    # --- subresources --------------------------------------------------------------------

    def bind(self, request: RestRequest) -> Reply:
        """``pods/binding``: 201 with a success Status (upstream ``BindingREST.Create``)."""
        binding, warnings = self._read_subresource(request, Binding)
        self.service.bind(binding)
        return Reply(201, status.success_status(201), tuple(warnings))

    def evict(self, request: RestRequest) -> Reply:
        """``pods/eviction``: 201 with a success Status, 429 when a PDB forbids it."""
        eviction, warnings = self._read_subresource(request, Eviction)
        self.service.evict(eviction)
        return Reply(201, status.success_status(201), tuple(warnings))

    def create_token(self, request: RestRequest) -> Reply:
        """``serviceaccounts/token``: 201 with the TokenRequest carrying its token."""
        if self.token_issuer is None:
            # Upstream installs the subresource only when it has a token issuer.
            raise status.path_not_found()
        token_request, warnings = self._read_object(
            request, TokenRequest, expect_name=False, api_version=AUTHENTICATION_V1
        )
        target = request.target
        issued = tokenrequest.create_token(
            self.service,
            self.token_issuer,
            namespace=target.namespace or "",
            name=target.name,
            request=default_token_request(token_request),
            now=self.clock.now(),
        )
        return Reply(201, issued.body, (*warnings, *issued.warnings))

    def _read_subresource(self, request: RestRequest, model: type[Any]) -> tuple[Any, list[str]]:
        target = request.target
        kind = model.__name__
        cannot = f'{kind} in version "v1" cannot be handled as a {kind}'
        data, duplicates = self._parse_body(request, kind)
        data, warnings = self._validate_fields(
            request, kind, data, duplicates, prefix=f"{cannot}: "
        )
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        name = (metadata or {}).get("name") or ""
        if name != target.name:
            raise errors.bad_request(f"name in URL does not match name in {kind} object")
        namespace = (metadata or {}).get("namespace") or ""
        if namespace and namespace != target.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        data = {**data, "metadata": {**(metadata or {}), "namespace": target.namespace}}
        try:
            return from_dict(model, data), warnings
        except DecodeError as exc:
            raise errors.bad_request(f"{cannot}: {exc.message}") from exc

    def get_scale(self, request: RestRequest) -> Reply:
        """GET ``deployments/<name>/scale``: an autoscaling/v1 ``Scale``."""
        target = request.target
        return Reply(
            200, to_dict(self.service.get_scale(target.info.model, target.name, target.namespace))
        )

    def write_scale(self, request: RestRequest) -> Reply:
        """PUT or PATCH the ``scale`` subresource; the workload's ``spec.replicas`` changes."""
        target = request.target
        info = target.info
        if request.method == "PUT":
            new_scale, warnings = self._read_object(
                request, Scale, expect_name=True, api_version="autoscaling/v1"
            )
        else:
            scale_doc = to_dict(self.service.get_scale(info.model, target.name, target.namespace))
            patch_type = self._patch_type(request)
            body, _ = _parse_json(request.body)
            try:
                patched = apply_patch(scale_doc, body, patch_type=patch_type, kind="Scale")
                new_scale = from_dict(Scale, patched)
            except PatchError as exc:
                raise errors.bad_request(str(exc)) from exc
            except DecodeError as exc:
                raise errors.bad_request(
                    f'Scale in version "v1" cannot be handled as a Scale: {exc.message}'
                ) from exc
            warnings = []
        new_scale = dataclasses.replace(
            new_scale,
            metadata=dataclasses.replace(
                new_scale.metadata, name=target.name, namespace=target.namespace
            ),
        )
        result = self.service.update_scale_object(
            info.model, new_scale, user=request.user, dry_run=dry_run(request.query)
        )
        return Reply(200, to_dict(result.obj), (*warnings, *result.warnings))


def _parse_json(body: bytes, kind: str | None = None) -> tuple[Any, list[str]]:
    """A JSON body (an object, or a patch already matched to its patch type) and its
    duplicate-key problems; malformed JSON is a 400 (``_json_failure``)."""
    try:
        return fieldvalidation.parse_json(body)
    except UnicodeDecodeError:
        # Go's decoder takes invalid UTF-8 inside strings as U+FFFD; Python's refuses it.
        text = body.decode("utf-8", "replace")
    except ValueError as exc:
        raise _json_failure(body, exc, kind) from exc
    try:
        return fieldvalidation.parse_json(text)
    except ValueError as exc:
        raise _json_failure(body, exc, kind) from exc


def _parse_yaml(body: bytes) -> Any:
    """A YAML body's one document as it loads (any type: the caller judges it)."""
    try:
        loaded = load_yaml(body.decode(), "request body")
    except (ManifestError, UnicodeDecodeError) as exc:
        raise errors.bad_request(str(exc)) from exc
    documents = [document for document in loaded if document is not None]
    if len(documents) > 1:
        raise errors.bad_request("error decoding YAML: expected one document")
    return documents[0] if documents else {}


def _type_error(value: object, kind: str) -> str:
    shown = {list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(
        type(value), "value"
    )
    return f"json: cannot unmarshal {shown} into Go value of type v1.{kind}"


def _json_failure(body: bytes, exc: Exception, kind: str | None) -> errors.StatusError:
    """A body Python's decoder refused, in upstream's words: Go's syntax error (scanned
    only now, so correct bodies never pay for it), wrapped as ``transformDecodeError``
    words it when the body should be an object of ``kind``."""
    syntax = gojson.syntax_error(body)
    if syntax is not None and kind is not None:
        return decodeerrors.unrecognized(kind, decodeerrors.parse_cause(syntax), body)
    return errors.bad_request(syntax or str(exc))
