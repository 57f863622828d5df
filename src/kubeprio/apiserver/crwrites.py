"""The writes of custom resources: create, update, patch, scale and delete.

What it is: the write half of v1.32's ``apiextensions-apiserver`` custom resource handler
and ``pkg/registry/customresource`` (strategy, status and scale REST):

* create (201; refused while the CRD terminates), update (PUT; ``metadata.resourceVersion``
  required, 409 on a stale one, both read from the object the mutating phase returned,
  ``apiserver.crupdateversion``), delete (a success Status naming the plural; objects with
  finalizers are only marked), ``deletecollection``;
* PATCH with JSON merge patch, JSON patch and apply patches (server-side apply is taken
  as a merge of the applied configuration, creating the object when absent); a
  strategic merge patch is upstream's 415;
* the body of every write is pruned, defaulted and validated (``apiserver.crbodies``);
* ``metadata.generation`` starts at 1 and grows when anything but metadata (and status,
  with the status subresource) changes; with the ``status`` subresource a main write
  keeps the stored status and ``/status`` writes change only the status;
* every write and delete goes through the admission chain (``apiserver.cradmission``),
  except that a write through ``scale`` is admitted as one of autoscaling/v1 Scales
  (``apiserver.crscaleadmission``); deletions are reported to the quota counts
  (``apiserver.customquota``).

Who drives it: ``apiserver.crrest``'s dispatch of ``apiserver.http``'s requests, and the
HPA's custom scale targets (``apiserver.crscaletargets``) through it.
"""

from __future__ import annotations

import copy
import dataclasses

from kubeprio.admission.chain import AdmissionOutcome, Operation
from kubeprio.api import errors
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.apps import Scale
from kubeprio.api.jsonpatch import PatchError, apply_json_patch, apply_merge_patch
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import (
    crddeletion,
    crscale,
    crscaleadmission,
    deletion,
    status,
    storageprecondition,
)
from kubeprio.apiserver.cradmission import CustomAdmission
from kubeprio.apiserver.crbodies import (
    PATCH_TYPES,
    cannot_handle,
    prepare_body,
    read_body,
    validate_written,
)
from kubeprio.apiserver.crreads import CustomResourceReads
from kubeprio.apiserver.crupdateversion import version_required
from kubeprio.apiserver.crwire import decode_object, versioned
from kubeprio.apiserver.customquota import CustomResourceCounts
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.negotiation import dry_run, media_type
from kubeprio.apiserver.restdecoding import (
    delete_options,
    parse_apply_body,
    parse_json,
    read_object,
)
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.scale import patched_scale
from kubeprio.apiserver.scaleadmission import ViewAdmission, mutate_scale
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.strategy import kept_on_update
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyExistsError, KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import object_revision


class CustomResourceWrites(CustomResourceReads):
    """Writes custom objects to the service's store, through their admission chain."""

    def __init__(
        self,
        service: ApiService,
        *,
        clock: Clock,
        watch_timeout: float,
        counts: CustomResourceCounts | None = None,
    ) -> None:
        super().__init__(service, clock=clock, watch_timeout=watch_timeout)
        self.counts = counts
        self.admission = CustomAdmission(service)

    def create(self, request: RestRequest, found: CustomVersion) -> Reply:
        """POST: a new object (201); refused while the CRD terminates."""
        if found.terminating:
            raise crddeletion.create_while_terminating(found.info.plural, found.info.group)
        data, duplicates = read_body(request, found)
        return self._create(request, found, data, duplicates)

    def _create(
        self, request: RestRequest, found: CustomVersion, data: JsonDict, duplicates: list[str]
    ) -> Reply:
        info = found.info
        data, warnings = prepare_body(request, found, data, duplicates)
        if found.has_status:
            data.pop("status", None)
        obj = decode_object(data)
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
        validate_written(found, obj, None)
        self.admission.validate(admission, obj, outcome)
        warnings.extend(outcome.warnings)
        if request.query.get("dryRun"):
            return Reply(201, versioned(found, obj), warnings=tuple(warnings))
        try:
            stored = self.store.create(self._key(found, meta.namespace, meta.name or ""), obj)
        except KeyExistsError:
            raise errors.already_exists(info.plural, info.group, meta.name or "") from None
        assert isinstance(stored, CustomObject)
        self.admission.stored(outcome)
        return Reply(201, versioned(found, stored), warnings=tuple(warnings))

    def update(self, request: RestRequest, found: CustomVersion) -> Reply:
        """PUT of the object or its status; the body's uid is a storage precondition
        (``apiserver.storageprecondition``)."""
        data, duplicates = read_body(request, found)
        target = request.target
        sent = data.get("metadata")
        metadata = sent if isinstance(sent, dict) else {}
        name = metadata.get("name")
        if name and name != target.name:
            raise errors.bad_request(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({target.name})"
            )
        current = self._read(found, target.namespace, target.name)
        uid = metadata.get("uid")
        storageprecondition.check(found.info, current, uid if isinstance(uid, str) else None)
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
        admitted: ViewAdmission | None = None,
    ) -> Reply:
        """Write ``data`` over ``current``; ``admitted``: a ``scale`` write, whose
        mutating phase already ran on Scales and whose validating phase sees Scales."""
        info = found.info
        target = request.target
        data, warnings = prepare_body(request, found, data, duplicates)
        data["metadata"].setdefault("name", target.name)
        obj = decode_object(data)
        if admitted is None:
            outcome = AdmissionOutcome()
            admission = self.admission.request(request, found, Operation.UPDATE, obj, current)
            obj = self.admission.mutate(found, admission, outcome)
        else:
            outcome = admitted.outcome
        # Upstream's store reads the resourceVersion of the mutated object, before the
        # strategy and validation: a webhook is called on a PUT without one (and one that
        # sets it makes the write conditional on it).
        given_version = obj.metadata.resource_version
        if require_version and not given_version:
            raise version_required(info.plural, info.group, target.name)
        expected = int(given_version) if given_version else object_revision(current)
        if expected != object_revision(current):
            raise errors.conflict(info.plural, info.group, target.name)
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
            metadata = kept_on_update(obj.metadata, old.metadata)
            ignored = ("status",) if found.has_status else ()
            if {k: v for k, v in new_body.items() if k not in ignored} != {
                k: v for k, v in old_body.items() if k not in ignored
            }:
                metadata = evolve(metadata, generation=(old.metadata.generation or 0) + 1)
        updated = CustomObject(metadata=metadata, extra=new_body)
        validate_written(found, updated, old)
        if admitted is None:
            self.admission.validate(admission, updated, outcome)
        else:
            self.service.admission.validate(admitted.validation_request(updated, old), outcome)
        warnings.extend(outcome.warnings)
        if request.query.get("dryRun"):
            return Reply(200, versioned(found, updated), warnings=tuple(warnings))
        key = self._key(found, target.namespace, target.name)
        if updated.metadata.deletion_timestamp and not updated.metadata.finalizers:
            self.store.delete(key, expected_revision=expected)
            self._deleted(found, updated)
            return Reply(200, versioned(found, updated), warnings=tuple(warnings))
        try:
            stored = self.store.update(key, updated, expected_revision=expected)
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, target.name) from None
        assert isinstance(stored, CustomObject)
        self.admission.stored(outcome)
        return Reply(200, versioned(found, stored), warnings=tuple(warnings))

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
                raise errors.bad_request(cannot_handle(found, "object body expected")) from None
            return self._create(request, found, body, duplicates)
        document = versioned(found, current)
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
            raise errors.bad_request(cannot_handle(found, "object body expected"))
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
        """GET, PUT or PATCH ``<plural>/<name>/scale`` (``apiserver.crscale``), a write
        admitted on Scales (``apiserver.crscaleadmission``)."""
        paths = found.scale
        if paths is None:
            raise status.path_not_found()
        target = request.target
        current = self._read(found, target.namespace, target.name)
        document = versioned(found, current)
        if request.method == "GET":
            return Reply(200, to_dict(crscale.read_scale(document, paths)))
        if request.method == "PUT":
            new_scale, warnings = read_object(
                request, Scale, expect_name=True, api_version="autoscaling/v1"
            )
            storageprecondition.check(found.info, current, new_scale.metadata.uid)
            old_scale = crscale.scale_to_patch(document, paths)
        elif request.method == "PATCH":
            old_scale = crscale.scale_to_patch(document, paths)
            new_scale, warnings = patched_scale(request, old_scale)
        else:
            raise status.method_not_allowed()
        admitted = mutate_scale(
            self.service.admission,
            found.info,
            new_scale,
            old_scale,
            crscaleadmission.scale_view(found),
            user=request.user,
            dry_run=dry_run(request.query),
        )
        updated = crscale.with_replicas(document, admitted.scale, paths)
        written = self._replace(
            request, found, current, updated, [], require_version=False, admitted=admitted
        )
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
            return Reply(200, versioned(found, current), warnings)
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
