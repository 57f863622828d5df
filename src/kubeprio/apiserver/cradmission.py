"""The admission chain for custom resources: what ``apiserver.crrest`` runs around a write.

What it is: v1.32's custom resource handler goes through the same generic registry
(``registry/generic/registry/store.go``) and REST handlers (``endpoints/handlers``) as the
built-in kinds, so the same admission runs on a custom resource's create, update, patch
and delete: mutating plugins (webhooks whose rules name the resource's group and
plural), validation, validating plugins (ValidatingAdmissionPolicies, validating
webhooks, then ResourceQuota, whose generic object count evaluator charges
``count/<plural>.<group>``), then the store. A built-in plugin that knows only its own
kinds lets a custom object pass.

* ``CustomAdmission.mutate``: the mutating phase; when a webhook changed the object,
  the result is pruned and defaulted again by the version's schema (upstream prunes and
  defaults a webhook's output: unknown fields it added are dropped, never stored);
* ``validate``: the validating phase on the object about to be stored;
* ``stored``: after the write, the quota usages ResourceQuota charged are written and
  the events plugins reported recorded (as ``ServiceWrites`` does for built-in kinds; a
  delete's too);
* ``admit_delete``: the DELETE attributes of ``apiserver.deleteadmission``.

A write through ``<plural>/scale`` is admitted on Scales instead
(``apiserver.crscaleadmission``).

Who drives it: ``apiserver.crwrites``.
"""

from __future__ import annotations

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Operation
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.crpruning import apply_defaults, prune
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver import deleteadmission
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.negotiation import dry_run
from kubeprio.apiserver.restmessages import RestRequest
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest


def _document(obj: CustomObject) -> JsonDict:
    return {**obj.extra, "metadata": to_dict(obj.metadata)}


class CustomAdmission:
    """The admission steps of custom resource writes, over the API service's chain."""

    def __init__(self, service: ApiService) -> None:
        self.service = service

    def request(
        self,
        request: RestRequest,
        found: CustomVersion,
        operation: Operation,
        obj: CustomObject,
        old: CustomObject | None,
    ) -> AdmissionRequest:
        """The attributes of a create or update of ``obj`` (``old``: the stored object)."""
        metadata = obj.metadata
        return AdmissionRequest(
            operation,
            found.info,
            obj,
            old,
            metadata.namespace or request.target.namespace or "",
            metadata.name or "",
            request.target.subresource,
            request.user,
            dry_run(request.query),
        )

    def mutate(
        self, found: CustomVersion, request: AdmissionRequest, outcome: AdmissionOutcome
    ) -> CustomObject:
        """The mutating phase; a changed object is pruned and defaulted again."""
        mutated = self.service.admission.mutate(request, outcome)
        assert isinstance(mutated, CustomObject)
        if mutated is request.obj or mutated == request.obj:
            return mutated
        pruned, _unknown = prune(_document(mutated), found.schema)
        decoded = from_dict(CustomObject, apply_defaults(pruned, found.schema))
        assert isinstance(decoded, CustomObject)
        return decoded

    def validate(
        self, request: AdmissionRequest, obj: CustomObject, outcome: AdmissionOutcome
    ) -> None:
        """The validating phase on the object about to be stored."""
        named = evolve(request, obj=obj, name=obj.metadata.name or request.name)
        self.service.admission.validate(named, outcome)

    def stored(self, outcome: AdmissionOutcome | None) -> None:
        """After the write: charge the quotas, record the events."""
        if outcome is None:
            return
        self.service._charge_quotas(outcome)
        self.service._record_events(outcome)

    def admit_delete(
        self,
        request: RestRequest,
        found: CustomVersion,
        current: CustomObject,
        options: DeleteRequest,
        *,
        collection: bool = False,
    ) -> AdmissionOutcome | None:
        """Admit deleting ``current`` (``None``: no plugin handles DELETE)."""
        return deleteadmission.admit(
            self.service.admission,
            found.info,
            current,
            options,
            user=request.user,
            collection=collection,
        )
