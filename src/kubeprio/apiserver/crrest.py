"""The REST verbs of custom resources: untyped objects validated by their CRD's schema.

What it is: v1.32's ``apiextensions-apiserver/pkg/apiserver/customresource_handler.go``
and ``pkg/registry/customresource`` (strategy, status and scale REST) for the requests
kubectl and the client libraries send:

* create (201), get, list (label selectors; field selectors ``metadata.name`` and
  ``metadata.namespace``), watch, update (PUT; ``metadata.resourceVersion`` required, 409
  on a stale one), delete (a success Status naming the plural; objects with finalizers
  are only marked), ``deletecollection``;
* PATCH with JSON merge patch, JSON patch and apply patches (server-side apply is taken
  as a merge of the applied configuration, creating the object when absent); a
  strategic merge patch is upstream's 415 (``accepted media types include:
  application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml``);
* every write: fields the schema does not specify are pruned (``fieldValidation=Strict``,
  what kubectl sends, refuses them: ``strict decoding error: unknown field "spec.foo"``),
  defaults are applied, then the object metadata and the schema are validated
  (``api.crvalidation``; 422 ``Widget.example.com "x" is invalid: ...``);
* ``metadata.generation`` starts at 1 and grows when anything but metadata (and status,
  with the status subresource) changes; with the ``status`` subresource a main write
  keeps the stored status and ``/status`` writes change only the status;
* reads as JSON or as a Table of the version's printer columns (``apiserver.crtables``);
* every write and delete goes through the admission chain (``apiserver.cradmission``):
  webhooks and policies that name the resource, ResourceQuota's ``count/<plural>.<group>``.

Who drives it: ``apiserver.http`` for targets ``apiserver.customresources`` routed.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, Operation
from kubeprio.api import crdcel, errors
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.apps import Scale
from kubeprio.api.crpruning import apply_defaults, prune
from kubeprio.api.crvalidation import validate_custom_object
from kubeprio.api.jsonpatch import PatchError, apply_json_patch, apply_merge_patch
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.validation.meta import validate_object_meta, validate_object_meta_update
from kubeprio.apiserver import (
    crddeletion,
    crscale,
    deletion,
    fieldvalidation,
    listing,
    status,
    tables,
)
from kubeprio.apiserver.cradmission import CustomAdmission
from kubeprio.apiserver.customquota import CustomResourceCounts
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.fieldvalidation import FieldValidation
from kubeprio.apiserver.negotiation import flag, integer, media_type, negotiate
from kubeprio.apiserver.restdecoding import (
    delete_options,
    parse_apply_body,
    parse_json,
    read_object,
)
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.scale import patched_scale
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.watch import ServiceWatch
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyExistsError, KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import ObjectKey, object_revision

PATCH_TYPES: Final = {
    PatchType.JSON_PATCH.value: PatchType.JSON_PATCH,
    PatchType.MERGE_PATCH.value: PatchType.MERGE_PATCH,
    PatchType.APPLY_PATCH.value: PatchType.APPLY_PATCH,
}
"""What a custom resource takes (no strategic merge: there is no Go struct to read)."""


def object_json(obj: CustomObject) -> JsonDict:
    """The wire form: keys sorted, as Go encodes an unstructured map."""
    document = {**obj.extra, "metadata": to_dict(obj.metadata)}
    return dict(sorted(document.items()))


def _decode(document: JsonDict) -> CustomObject:
    obj = from_dict(CustomObject, document)
    assert isinstance(obj, CustomObject)
    return obj


class CustomResourceRest:
    """Serves the requests of custom resources against the service's store."""

    def __init__(
        self,
        service: ApiService,
        *,
        clock: Clock,
        watch_timeout: float,
        counts: CustomResourceCounts | None = None,
    ) -> None:
        self.service = service
        self.counts = counts
        self.store = service.store
        self.clock = clock
        self.watch_timeout = watch_timeout
        self.admission = CustomAdmission(service)

    def handle(self, request: RestRequest, found: CustomVersion) -> Reply | WatchStream:
        """Serve one request; raise ``StatusError`` for failures."""
        target = request.target
        method = request.method
        sub = target.subresource
        if sub == "scale":
            return self.scale(request, found)
        if target.is_collection:
            if method == "GET":
                if flag(request.query, "watch"):
                    return self.watch(request, found)
                return self.list_collection(request, found)
            if method == "POST" and (target.namespace is not None or not target.info.namespaced):
                return self.create(request, found)
            if method == "DELETE":
                return self.delete_collection(request, found)
            raise status.method_not_allowed()
        if method == "GET":
            return self.get(request, found)
        if method == "PUT":
            return self.update(request, found)
        if method == "PATCH":
            return self.patch(request, found)
        if method == "DELETE" and not sub:
            return self.delete(request, found)
        raise status.method_not_allowed()

    # --- reads -----------------------------------------------------------------------------

    def _key(self, found: CustomVersion, namespace: str | None, name: str) -> ObjectKey:
        return ObjectKey(found.store_resource, namespace or "", name)

    def _read(self, found: CustomVersion, namespace: str | None, name: str) -> CustomObject:
        try:
            obj = self.store.get(self._key(found, namespace, name))
        except KeyNotFoundError:
            raise errors.not_found(found.info.plural, found.info.group, name) from None
        assert isinstance(obj, CustomObject)
        return obj

    def _answer(
        self, request: RestRequest, found: CustomVersion, obj: CustomObject, code: int
    ) -> Reply:
        output = negotiate(request.accept)
        if output.table:
            return Reply(
                code,
                tables.build_table(
                    CustomObject,
                    [obj],
                    now=self.clock.now(),
                    resource_version=obj.metadata.resource_version,
                    api_version=output.table_api_version,
                    printer=found.printer,
                ),
            )
        return Reply(code, self._versioned(found, obj))

    @staticmethod
    def _versioned(found: CustomVersion, obj: CustomObject) -> JsonDict:
        """The object at the request's version (versions share one schema-less conversion:
        upstream's ``None`` strategy only rewrites ``apiVersion``)."""
        document = object_json(obj)
        document["apiVersion"] = found.info.api_version
        return document

    def get(self, request: RestRequest, found: CustomVersion) -> Reply:
        """GET one object (or its ``status``)."""
        target = request.target
        return self._answer(request, found, self._read(found, target.namespace, target.name), 200)

    def list_collection(self, request: RestRequest, found: CustomVersion) -> Reply:
        """GET a collection with label and field selectors."""
        target = request.target
        query = request.query
        matches = listing.object_filter(
            target.info, query.get("labelSelector") or None, query.get("fieldSelector") or None
        )
        items, revision = self.store.list(found.prefix(target.namespace))
        selected = [obj for obj in items if matches is None or matches(obj)]
        output = negotiate(request.accept)
        if output.table:
            return Reply(
                200,
                tables.build_table(
                    CustomObject,
                    selected,
                    now=self.clock.now(),
                    resource_version=str(revision),
                    api_version=output.table_api_version,
                    printer=found.printer,
                ),
            )
        return Reply(
            200,
            {
                "apiVersion": found.info.api_version,
                "items": [self._versioned(found, obj) for obj in selected],  # type: ignore[arg-type]
                "kind": found.list_kind,
                "metadata": {"continue": "", "resourceVersion": str(revision)},
            },
        )

    def watch(self, request: RestRequest, found: CustomVersion) -> WatchStream:
        """``?watch=true`` from ``resourceVersion`` (or the current state, as ADDED events)."""
        target = request.target
        query = request.query
        matches = listing.object_filter(
            target.info, query.get("labelSelector") or None, query.get("fieldSelector") or None
        )
        prefix = found.prefix(target.namespace)
        since = query.get("resourceVersion") or ""
        initial: list[Any] = []
        if since in ("", "0"):
            initial, revision = self.store.list(prefix)
            initial = [obj for obj in initial if matches is None or matches(obj)]
        else:
            try:
                revision = int(since)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {since}") from None
        try:
            store_watch = self.store.watch(prefix, revision)
        except Exception as exc:  # RevisionCompactedError: 410 as an ERROR event
            if type(exc).__name__ != "RevisionCompactedError":
                raise
            return WatchStream.failed(errors.gone(str(exc)), model=CustomObject, clock=self.clock)
        timeout = integer(query, "timeoutSeconds")
        return WatchStream(
            ServiceWatch(store_watch, initial, matches),
            model=CustomObject,
            output=negotiate(request.accept),
            clock=self.clock,
            current_revision=self.store.current_revision,
            bookmarks=flag(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout and timeout > 0 else self.watch_timeout,
            encode=lambda obj: self._versioned(found, obj),
            printer=found.printer,
            kind=(found.info.api_version, found.info.kind),
        )

    # --- writes ----------------------------------------------------------------------------

    def _body(self, request: RestRequest, found: CustomVersion) -> tuple[JsonDict, list[str]]:
        data, duplicates = parse_json(request.body, found.info.kind)
        if not isinstance(data, dict):
            raise errors.bad_request(self._cannot_handle(found, "object body expected"))
        return data, duplicates

    @staticmethod
    def _cannot_handle(found: CustomVersion, detail: str) -> str:
        info = found.info
        return (
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {detail}'
        )

    def _prepare(
        self, request: RestRequest, found: CustomVersion, data: JsonDict, duplicates: list[str]
    ) -> tuple[JsonDict, list[str]]:
        """Type, namespace, pruning (per ``fieldValidation``) and defaults of a body."""
        info = found.info
        data = dict(data)
        data.setdefault("apiVersion", info.api_version)
        data.setdefault("kind", info.kind)
        if data["apiVersion"] != info.api_version or data["kind"] != info.kind:
            raise errors.bad_request(
                f"the API version in the data ({data['apiVersion']}) does not match the expected "
                f"API version ({info.api_version})"
                if data["apiVersion"] != info.api_version
                else f"the kind in the data ({data['kind']}) does not match the expected kind ({info.kind})"
            )
        metadata = data.get("metadata")
        metadata = dict(metadata) if isinstance(metadata, dict) else {}
        namespace = request.target.namespace
        if info.namespaced and namespace is not None:
            given = metadata.get("namespace")
            if given and given != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            metadata["namespace"] = namespace
        data["metadata"] = metadata
        pruned, unknown = prune(data, found.schema)
        mode = FieldValidation.parse(request.query.get("fieldValidation"))
        problems = fieldvalidation.strict_problems(
            duplicates, [f'unknown field "{p}"' for p in unknown]
        )
        warnings: list[str] = []
        if problems and mode is FieldValidation.STRICT:
            raise errors.bad_request(
                self._cannot_handle(found, fieldvalidation.strict_error(problems))
            )
        if problems and mode is FieldValidation.WARN:
            warnings = problems
        return apply_defaults(pruned, found.schema), warnings

    def _validate(self, found: CustomVersion, obj: CustomObject, old: CustomObject | None) -> None:
        info = found.info
        problems = (
            validate_object_meta(obj.metadata, info)
            if old is None
            else validate_object_meta_update(obj.metadata, old.metadata)
        )
        data = object_json(obj)
        problems += validate_custom_object(data, found.schema)
        if found.scale is not None:
            # customResourceValidator.Validate checks the scale paths before the CEL rules.
            problems += crscale.validate_scale_paths(data, found.scale)
        old_data = object_json(old) if old is not None else None
        problems += crdcel.rule_errors(data, old_data, found.schema, problems)
        if problems:
            name = obj.metadata.name or obj.metadata.generate_name or ""
            raise errors.invalid_error(info.kind, info.group, name, problems)

    def create(self, request: RestRequest, found: CustomVersion) -> Reply:
        """POST: a new object (201); refused while the CRD terminates."""
        if found.terminating:
            raise crddeletion.create_while_terminating(found.info.plural, found.info.group)
        data, duplicates = self._body(request, found)
        return self._create(request, found, data, duplicates)

    def _create(
        self, request: RestRequest, found: CustomVersion, data: JsonDict, duplicates: list[str]
    ) -> Reply:
        info = found.info
        data, warnings = self._prepare(request, found, data, duplicates)
        if found.has_status:
            data.pop("status", None)
        obj = _decode(data)
        meta = obj.metadata
        # NamespaceLifecycle, then the mutating plugins (``apiserver.cradmission``).
        self.service._check_namespace(
            info, meta.namespace or "", Operation.CREATE, meta.name or meta.generate_name or ""
        )
        outcome = AdmissionOutcome()
        admission = self.admission.request(request, found, Operation.CREATE, obj, None)
        obj = self.admission.mutate(found, admission, outcome)
        if found.has_status and "status" in obj.extra:
            obj = evolve(obj, extra={k: v for k, v in obj.extra.items() if k != "status"})
        meta = obj.metadata
        if not meta.name and meta.generate_name:
            meta = evolve(meta, name=self.service._generate_name(meta.generate_name))
        meta = evolve(
            meta,
            uid=self.service._new_uid(),
            creation_timestamp=self.service._now(),
            resource_version=None,
            generation=1,
            deletion_timestamp=None,
            deletion_grace_period_seconds=None,
        )
        obj = evolve(obj, metadata=meta)
        self._validate(found, obj, None)
        self.admission.validate(admission, obj, outcome)
        warnings.extend(outcome.warnings)
        if request.query.get("dryRun"):
            return Reply(201, self._versioned(found, obj), warnings=tuple(warnings))
        try:
            stored = self.store.create(self._key(found, meta.namespace, meta.name or ""), obj)
        except KeyExistsError:
            raise errors.already_exists(info.plural, info.group, meta.name or "") from None
        assert isinstance(stored, CustomObject)
        self.admission.stored(outcome)
        return Reply(201, self._versioned(found, stored), warnings=tuple(warnings))

    def update(self, request: RestRequest, found: CustomVersion) -> Reply:
        """PUT of the object or its status."""
        data, duplicates = self._body(request, found)
        target = request.target
        name = (
            (data.get("metadata") or {}).get("name")
            if isinstance(data.get("metadata"), dict)
            else None
        )
        if name and name != target.name:
            raise errors.bad_request(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({target.name})"
            )
        current = self._read(found, target.namespace, target.name)
        return self._replace(request, found, current, data, duplicates, require_version=True)

    def _replace(
        self,
        request: RestRequest,
        found: CustomVersion,
        current: CustomObject,
        data: JsonDict,
        duplicates: list[str],
        *,
        require_version: bool,
    ) -> Reply:
        info = found.info
        target = request.target
        data, warnings = self._prepare(request, found, data, duplicates)
        data["metadata"].setdefault("name", target.name)
        obj = _decode(data)
        given_version = obj.metadata.resource_version
        if require_version and not given_version:
            raise errors.invalid_error(
                info.kind,
                info.group,
                target.name,
                [
                    errors.invalid(
                        "metadata.resourceVersion",
                        errors.GoValue("0x0"),
                        "must be specified for an update",
                    )
                ],
            )
        outcome = AdmissionOutcome()
        admission = self.admission.request(request, found, Operation.UPDATE, obj, current)
        obj = self.admission.mutate(found, admission, outcome)
        old = current
        new_body = dict(obj.extra)
        old_body = dict(old.extra)
        if target.subresource == "status":
            new_body = {**old_body, "status": new_body.get("status")}
            if new_body["status"] is None:
                del new_body["status"]
            metadata = evolve(
                old.metadata, resource_version=given_version or old.metadata.resource_version
            )
        else:
            if found.has_status:
                new_body.pop("status", None)
                if "status" in old_body:
                    new_body["status"] = old_body["status"]
            metadata = evolve(
                obj.metadata,
                uid=obj.metadata.uid or old.metadata.uid,
                creation_timestamp=old.metadata.creation_timestamp,
                deletion_timestamp=old.metadata.deletion_timestamp,
                deletion_grace_period_seconds=old.metadata.deletion_grace_period_seconds,
                generation=old.metadata.generation,
            )
            ignored = ("status",) if found.has_status else ()
            if {k: v for k, v in new_body.items() if k not in ignored} != {
                k: v for k, v in old_body.items() if k not in ignored
            }:
                metadata = evolve(metadata, generation=(old.metadata.generation or 0) + 1)
        updated = CustomObject(metadata=metadata, extra=new_body)
        self._validate(found, updated, old)
        self.admission.validate(admission, updated, outcome)
        warnings.extend(outcome.warnings)
        expected = int(given_version) if given_version else object_revision(old)
        if expected != object_revision(old):
            raise errors.conflict(info.plural, info.group, target.name)
        if request.query.get("dryRun"):
            return Reply(200, self._versioned(found, updated), warnings=tuple(warnings))
        key = self._key(found, target.namespace, target.name)
        if updated.metadata.deletion_timestamp and not updated.metadata.finalizers:
            self.store.delete(key, expected_revision=expected)
            self._deleted(found, updated)
            return Reply(200, self._versioned(found, updated), warnings=tuple(warnings))
        try:
            stored = self.store.update(key, updated, expected_revision=expected)
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, target.name) from None
        assert isinstance(stored, CustomObject)
        self.admission.stored(outcome)
        return Reply(200, self._versioned(found, stored), warnings=tuple(warnings))

    def patch(self, request: RestRequest, found: CustomVersion) -> Reply:
        """PATCH: JSON patch, merge patch or apply; strategic merge is a 415."""
        patch_type = PATCH_TYPES.get(media_type(request.content_type))
        if patch_type is None:
            raise errors.UnsupportedMediaTypeError.build(
                "the body of the request was in an unknown format - accepted media types "
                "include: " + ", ".join(PATCH_TYPES)
            )
        target = request.target
        if patch_type is PatchType.APPLY_PATCH:
            body, duplicates = parse_apply_body(request)
        else:
            body, duplicates = parse_json(request.body, found.info.kind)
        try:
            current = self._read(found, target.namespace, target.name)
        except errors.NotFoundError:
            if patch_type is not PatchType.APPLY_PATCH or target.subresource:
                raise
            if not isinstance(body, dict):
                raise errors.bad_request(
                    self._cannot_handle(found, "object body expected")
                ) from None
            return self._create(request, found, body, duplicates)
        document = self._versioned(found, current)
        try:
            if patch_type is PatchType.JSON_PATCH:
                patched = apply_json_patch(copy.deepcopy(document), body)
            else:
                patched = apply_merge_patch(copy.deepcopy(document), body)
        except PatchError as exc:
            if exc.code == 400:
                raise errors.bad_request(str(exc)) from None
            raise errors.invalid_error(found.info.kind, found.info.group, target.name, []) from exc
        if not isinstance(patched, dict):
            raise errors.bad_request(self._cannot_handle(found, "object body expected"))
        metadata = patched.get("metadata")
        given_version = isinstance(body, dict) and "resourceVersion" in (body.get("metadata") or {})
        if (
            isinstance(metadata, dict)
            and patch_type is not PatchType.JSON_PATCH
            and not given_version
        ):
            metadata["resourceVersion"] = current.metadata.resource_version
        return self._replace(request, found, current, patched, duplicates, require_version=False)

    def scale(self, request: RestRequest, found: CustomVersion) -> Reply:
        """GET, PUT or PATCH ``<plural>/<name>/scale`` (``apiserver.crscale``)."""
        paths = found.scale
        if paths is None:
            raise status.path_not_found()
        target = request.target
        current = self._read(found, target.namespace, target.name)
        document = self._versioned(found, current)
        if request.method == "GET":
            return Reply(200, to_dict(crscale.read_scale(document, paths)))
        if request.method == "PUT":
            new_scale, warnings = read_object(
                request, Scale, expect_name=True, api_version="autoscaling/v1"
            )
        elif request.method == "PATCH":
            new_scale, warnings = patched_scale(request, crscale.scale_to_patch(document, paths))
        else:
            raise status.method_not_allowed()
        updated = crscale.with_replicas(document, new_scale, paths)
        written = self._replace(request, found, current, updated, [], require_version=False)
        assert isinstance(written.body, dict)
        try:
            result, _ = crscale.scale_of(written.body, paths)
        except crscale.ScalePathError as exc:
            raise errors.bad_request(str(exc)) from None
        return Reply(200, to_dict(result), warnings=(*warnings, *written.warnings))

    def delete(self, request: RestRequest, found: CustomVersion) -> Reply:
        """DELETE: removed at once (a success Status), or only marked while finalizers remain."""
        target = request.target
        info = found.info
        options = delete_options(request)
        deletion.validate_delete_options(options)
        current = self._read(found, target.namespace, target.name)
        deletion.check_preconditions(info, current, options)
        key = self._key(found, target.namespace, target.name)
        outcome = self.admission.admit_delete(request, found, current, options)
        warnings = tuple(outcome.warnings) if outcome is not None else ()
        if options.dry_run:
            return Reply(
                200,
                status.deleted_status(target.name, info.group, info.plural, current.metadata.uid),
                warnings,
            )
        self.admission.stored(outcome)
        if current.metadata.finalizers:
            if not current.metadata.deletion_timestamp:
                marked = evolve(
                    current,
                    metadata=evolve(
                        current.metadata,
                        deletion_timestamp=self.service._now(),
                        deletion_grace_period_seconds=0,
                        generation=(current.metadata.generation or 0) + 1,
                    ),
                )
                current = self.store.update(key, marked, expected_revision=object_revision(current))  # type: ignore[assignment]
            return Reply(200, self._versioned(found, current), warnings)
        self.store.delete(key)
        self._deleted(found, current)
        return Reply(
            200,
            status.deleted_status(target.name, info.group, info.plural, current.metadata.uid),
            warnings,
        )

    def _deleted(self, found: CustomVersion, obj: CustomObject) -> None:
        """Tell the quota counts an object left (replenishment)."""
        if self.counts is not None:
            self.counts.deleted(found.info, obj.metadata.namespace or "")

    def delete_collection(self, request: RestRequest, found: CustomVersion) -> Reply:
        """DELETE a collection: every selected object, each admitted as a DELETE that
        names no object; answers the list of them."""
        options = delete_options(request)
        listed = self.list_collection(request, found)
        assert isinstance(listed.body, dict)
        warnings: list[str] = []
        for item in listed.body["items"]:
            meta = item["metadata"]
            key = self._key(found, meta.get("namespace"), meta["name"])
            try:
                current = self._read(found, meta.get("namespace"), meta["name"])
            except errors.NotFoundError:
                continue
            outcome = self.admission.admit_delete(request, found, current, options, collection=True)
            if outcome is not None:
                warnings.extend(outcome.warnings)
            if options.dry_run:
                continue
            try:
                self.store.delete(key)
            except KeyNotFoundError:
                continue
            self._deleted(found, current)
            self.admission.stored(outcome)
        return dataclasses.replace(listed, warnings=tuple(dict.fromkeys(warnings)))
