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

This module dispatches a request by verb and subresource; the reads are
``apiserver.crreads``, the writes ``apiserver.crwrites``, the decoding and validation of
write bodies ``apiserver.crbodies``, the wire form ``apiserver.crwire``.

Who drives it: ``apiserver.http`` for targets ``apiserver.customresources`` routed.
"""

from __future__ import annotations

from kubeprio.apiserver import status
from kubeprio.apiserver.crwrites import CustomResourceWrites
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.negotiation import flag
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.watchstream import WatchStream


class CustomResourceRest(CustomResourceWrites):
    """Serves the requests of custom resources against the service's store."""

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
