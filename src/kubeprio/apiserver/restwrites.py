"""``RestWrites``: the write verbs of the REST handler: create, update, patch, delete.

Mirrors upstream's ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go``,
``update.go``, ``patch.go`` and ``delete.go`` for what kubectl and the Python client send
(shared/reference/kubectl-wire.md): create answers 201 and ``dryRun=All`` writes nothing;
update is PUT (also of ``status`` and ``pods/ephemeralcontainers``); PATCH takes the four
content types, an apply patch of an absent object creates it (201), and a version served by
conversion is patched in its own view; DELETE answers with the object (pods, services, or
anything still terminating) or a success Status; a collection DELETE answers with the list
of deleted objects. The create-only self reviews (``apiserver.reviews``, TokenReview) are
answered here too: 201, nothing stored.

Who drives it: ``RestHandler`` (``apiserver.rest``) is built on it and dispatches here.
Bodies are decoded by ``apiserver.restdecoding``.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.encoded import json_fragment
from kubeprio.api.patch import PatchError, PatchType, apply_patch
from kubeprio.api.reviews import TokenReview
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.apiserver import reviews, status, tokenreview
from kubeprio.apiserver.authz import ReviewingAuthorizer
from kubeprio.apiserver.negotiation import dry_run
from kubeprio.apiserver.restdecoding import (
    delete_options,
    fill_metadata,
    parse_apply_body,
    parse_patch_body,
    patch_type_of,
    read_object,
    unmarshal_type_error,
    validate_fields,
)
from kubeprio.apiserver.restmessages import (
    Reply,
    RestRequest,
    field_selector,
    object_body,
    to_storage,
)
from kubeprio.apiserver.restreads import RestReads
from kubeprio.apiserver.routes import Target
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import Clock

RETURNS_DELETED_OBJECT: Final = frozenset(
    {
        "pods",
        "services",
        "podtemplates",
        "persistentvolumes",
        "persistentvolumeclaims",
        "resourcequotas",
        "serviceaccounts",
        "storageclasses",
        "csidrivers",
        "csinodes",
        "volumeattachments",
    }
)
"""Registries with ``ReturnDeletedObject: true`` (the ``storage.go`` of
``pkg/registry/core/{pod,service,podtemplate,persistentvolume,persistentvolumeclaim,
resourcequota,serviceaccount}`` and ``pkg/registry/storage/{storageclass,csidriver,csinode,
volumeattachment}``); others answer a deletion with a Status. The OpenAPI document shows
the same split (a DELETE of these answers the kind, of the rest a Status), which is what
the official client's typed ``delete_*`` methods deserialise."""


class RestWrites(RestReads):
    """Create, update, patch and delete over an ``ApiService``; the self reviews."""

    service: ApiService
    clock: Clock
    reviewer: ReviewingAuthorizer
    token_reviewer: tokenreview.TokenReviewAuthenticator | None

    def create(self, request: RestRequest) -> Reply:
        """POST a new object: 201 with the stored object."""
        obj, warnings = read_object(request, request.target.info.model, expect_name=False)
        result = self.service.create_object(
            obj, user=request.user, dry_run=dry_run(request.query), served=request.target.info
        )
        return Reply(
            201, object_body(request.target.info, result.obj), (*warnings, *result.warnings)
        )

    def review(self, request: RestRequest) -> Reply:
        """POST a self review: 201 with the answer in its status (nothing is stored)."""
        obj, warnings = read_object(request, request.target.info.model, expect_name=False)
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
        obj, warnings = read_object(request, target.info.model, expect_name=True)
        result = self.service.update_object(
            obj,
            subresource=target.subresource,
            user=request.user,
            dry_run=dry_run(request.query),
            served=target.info,
        )
        return Reply(200, object_body(target.info, result.obj), (*warnings, *result.warnings))

    def patch(self, request: RestRequest) -> Reply:
        """PATCH an object (or its status) with one of the four patch types."""
        target = request.target
        info = target.info
        patch_type = patch_type_of(request)
        if patch_type is PatchType.APPLY_PATCH:
            body, duplicates = parse_apply_body(request)
        else:
            body, duplicates = parse_patch_body(request, patch_type)
        warnings: list[str] = []
        if info.storage_version:
            return self._patch_converted(request, body, patch_type)
        if isinstance(body, dict) and patch_type is not PatchType.JSON_PATCH:
            body, warnings = validate_fields(
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
            obj = from_dict(info.model, to_storage(info, patched))
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
            served=info,
            uid_is_precondition=False,
        )
        return Reply(200, object_body(info, result.obj), tuple(result.warnings))

    def _apply_create(self, request: RestRequest, body: object, warnings: list[str]) -> Reply:
        """Server-side apply of an absent object creates it (upstream: 201 Created)."""
        info = request.target.info
        if not isinstance(body, dict):
            raise errors.bad_request(unmarshal_type_error(body, info.kind))
        data = fill_metadata(request, body, expect_name=True)
        try:
            obj = from_dict(info.model, data)
        except DecodeError as exc:
            raise errors.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                f"{exc.message}"
            ) from exc
        result = self.service.create_object(obj, user=request.user, dry_run=dry_run(request.query))
        return Reply(201, json_fragment(result.obj), (*warnings, *result.warnings))

    def delete(self, request: RestRequest) -> Reply:
        """DELETE an object: the object while it terminates, else a success Status."""
        target = request.target
        info = target.info
        options = delete_options(request)
        warnings: list[str] = []
        obj = self.service.delete_object(
            info.model,
            target.name,
            target.namespace,
            options=options,
            user=request.user,
            warnings=warnings,
        )
        if options.dry_run or info.plural in RETURNS_DELETED_OBJECT or self._exists(target):
            return Reply(200, object_body(info, obj), tuple(warnings))
        return Reply(
            200,
            status.deleted_status(target.name, info.group, info.plural, obj.metadata.uid),
            tuple(warnings),
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
        options = delete_options(request)
        result = self.service.list(
            info.model,
            target.namespace,
            label_selector=request.query.get("labelSelector") or None,
            field_selector=field_selector(info, request.query),
        )
        deleted = []
        warnings: list[str] = []
        for item in result.items:
            try:
                deleted.append(
                    self.service.delete_object(
                        info.model,
                        item.metadata.name or "",
                        item.metadata.namespace,
                        options=options,
                        user=request.user,
                        warnings=warnings,
                        collection=True,
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
            tuple(dict.fromkeys(warnings)),
        )
