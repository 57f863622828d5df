"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating``
and ``.../validating`` (``Dispatch``) over ``generic.Webhook`` and the configuration
managers: the webhooks of every configuration, configurations sorted by name, are matched
(``admission.webhookmatching``) and called (``admission.webhookcall``) in order.

* **Mutating** (after the built-in mutating plugins): each matching webhook sees the
  object the previous one left. ``allowed: false`` refuses the request with the webhook's
  Status (``admission.webhookreview.denial``). A ``JSONPatch`` answer is applied to the
  object as JSON; the result is decoded and defaulted again (upstream runs the defaulter
  on the patched object), so built-in defaults hold; a patch that does not apply or
  decode is a 500 (``Internal error occurred: ...``) whatever the failure policy, as is a
  patch on a request without an object. **Reinvocation**: when a webhook changed the
  object, the chain runs the mutating plugins once more (``AdmissionChain.mutate``); in
  that round only webhooks with ``reinvocationPolicy: IfNeeded`` that ran before the
  change are called again (upstream's ``webhookReinvokeContext``), and all of them if a
  built-in plugin changed the object in between.
* **Validating** (after the built-in validating plugins but before ResourceQuota, as in
  ``AllOrderedPlugins``): every matching webhook is called (in parallel under ``kubeprio
  serve``, as upstream; in order when called in place) and the first refusal or
  failure, in webhook order, is the answer.
* **Waiting**: under ``kubeprio serve`` a call the write has no answer for yet stops the
  write, which is run again once the answer is in (``admission.webhookdeferral``), so
  the server keeps serving meanwhile.
* **Failures** (``CallingError``): ``failurePolicy: Ignore`` skips the webhook; ``Fail``
  answers ``500 Internal error occurred: failed calling webhook "NAME": ...``.
* ``warnings`` in an answer become ``Warning:`` headers, also on a refused request.

The configurations are read through listers on every request and the index is rebuilt
only when they change (their names and resourceVersions), so a request to a resource no
webhook names costs a dictionary lookup. ``matchConditions`` are evaluated once the rules
match (``admission.webhookconditions``). Requests about admissionregistration.k8s.io
objects are never sent to webhooks (upstream's ``IsExemptAdmissionConfigurationResource``).
Plugins never write.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from kubeprio.admission import policyauthorizer
from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest
from kubeprio.admission.policyauthorizer import PolicyAuthorizer
from kubeprio.admission.webhookcall import CallingError, WebhookClient
from kubeprio.admission.webhookconditions import activation_of, conditions_hold
from kubeprio.admission.webhookdeferral import PendingCall, PendingCallsError, answered_call
from kubeprio.admission.webhookmatching import (
    Configuration,
    IndexedWebhook,
    Invocation,
    WebhookIndex,
    should_call,
)
from kubeprio.admission.webhookreview import ReviewResponse, build_review, denial
from kubeprio.api import errors
from kubeprio.api.core import Namespace
from kubeprio.api.defaults import default_object
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.gotext import go_quote
from kubeprio.api.jsonpatch import PatchError, apply_json_patch
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.serialization import DecodeError, from_dict, to_dict
from kubeprio.api.service import Service
from kubeprio.api.versionsignature import VersionSignature, version_signature
from kubeprio.api.webhookconfiguration import (
    GROUP,
    IF_NEEDED,
    IGNORE,
    MutatingWebhook,
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.client.informer import Lister
from kubeprio.client.versionedlister import VersionedLister

MUTATING_PLUGIN: Final = "MutatingAdmissionWebhook"
VALIDATING_PLUGIN: Final = "ValidatingAdmissionWebhook"

C = TypeVar("C", MutatingWebhookConfiguration, ValidatingWebhookConfiguration)


class WebhookListers(Protocol):
    """What the webhook plugins read: their configurations, namespaces (for
    namespaceSelector) and Services with their Endpoints (for service references)."""

    @property
    def mutating_webhook_configurations(self) -> VersionedLister[MutatingWebhookConfiguration]:
        """All MutatingWebhookConfigurations."""
        ...

    @property
    def validating_webhook_configurations(
        self,
    ) -> VersionedLister[ValidatingWebhookConfiguration]:
        """All ValidatingWebhookConfigurations."""
        ...

    @property
    def namespaces(self) -> Lister[Namespace]:
        """All Namespaces."""
        ...

    @property
    def services(self) -> Lister[Service]:
        """All Services."""
        ...

    @property
    def endpoints(self) -> Lister[Endpoints]:
        """All Endpoints."""
        ...


class _Source(Generic[C]):
    """The index of one kind of configuration, rebuilt when the configurations change
    (upstream's ``hookSource``: a snapshot that moves only with its configurations). The
    lister's generation says when they changed, so an unchanged set costs one number's
    comparison per request, not a list."""

    def __init__(self, lister: VersionedLister[C]) -> None:
        self._lister: VersionedLister[C] = lister
        self._generation = -1
        self._signature: VersionSignature | None = None
        self._index = WebhookIndex(())

    def index(self) -> WebhookIndex:
        generation = self._lister.generation()
        if generation == self._generation:
            return self._index
        configurations: Sequence[Configuration] = self._lister.list()
        signature = version_signature(configurations)
        if signature != self._signature:
            self._index = WebhookIndex(configurations)
            self._signature = signature
        self._generation = generation
        return self._index


def _encoder(obj: object, invocation: Invocation) -> dict[str, Any] | None:
    """The object as JSON at the version the webhook is sent it."""
    if obj is None:
        return None
    body = to_dict(obj)
    group, version, kind = invocation.kind
    if body.get("kind") == kind:
        body["apiVersion"] = f"{group}/{version}" if group else version
    return body


def _with_warnings(error: errors.StatusError, outcome: AdmissionOutcome) -> errors.StatusError:
    """Warnings gathered so far travel with a refusal (upstream sends them either way)."""
    error.warnings = tuple(outcome.warnings)
    return error


@dataclasses.dataclass(slots=True)
class _ReinvokeState:
    """Upstream's ``webhookReinvokeContext``, kept in the request's outcome."""

    last_output: object | None = None
    previously_invoked: set[tuple[str, int]] = dataclasses.field(default_factory=set)
    to_reinvoke: set[tuple[str, int]] = dataclasses.field(default_factory=set)

    def require_reinvoking_previously_invoked(self) -> None:
        self.to_reinvoke |= self.previously_invoked
        self.previously_invoked = set()


class _IndexSource(Protocol):
    """Where a plugin reads the index of its kind of configuration (``_Source``)."""

    def index(self) -> WebhookIndex: ...


class _WebhookPlugin:
    """What the two plugins share: the listers, the client, their configurations' index
    and one call with its failure policy."""

    def __init__(
        self,
        listers: WebhookListers,
        client: WebhookClient,
        source: _IndexSource,
        authorize: PolicyAuthorizer | None = None,
    ) -> None:
        self._listers = listers
        self._client = client
        self._source = source
        self._authorize: PolicyAuthorizer = authorize or policyauthorizer.allow_all

    def may_act(self, info: ResourceInfo) -> bool:
        """Whether a configured webhook's rules name ``info`` (if not, the plugin returns
        at once without a call)."""
        return bool(self._candidates_of(self._source.index(), info))

    def _namespace(self, name: str) -> Namespace | None:
        return self._listers.namespaces.get(name)

    def _candidates(
        self, index: WebhookIndex, request: AdmissionRequest
    ) -> tuple[IndexedWebhook, ...]:
        return self._candidates_of(index, request.resource)

    @staticmethod
    def _candidates_of(index: WebhookIndex, info: ResourceInfo) -> tuple[IndexedWebhook, ...]:
        if info.group == GROUP:
            # IsExemptAdmissionConfigurationResource: webhooks never see the objects that
            # configure admission, so a broken webhook cannot lock its own fix out.
            return ()
        return index.candidates(info.group, info.plural)

    def _invocation(self, entry: IndexedWebhook, request: AdmissionRequest) -> Invocation | None:
        invocation = should_call(entry.webhook, entry.configuration, request, self._namespace)
        if invocation is None or not entry.webhook.match_conditions:
            return invocation
        review = build_review(
            uid="",
            version="v1",
            invocation=invocation,
            request=request,
            obj=_encoder(request.obj, invocation),
            old_obj=_encoder(request.old_obj, invocation),
        )
        body = review["request"]
        activation = {
            **activation_of(body["object"], body["oldObject"], body),
            **policyauthorizer.activation_values(request, request.name),
        }
        holds = conditions_hold(
            entry.webhook,
            activation,
            resource=request.resource.plural,
            group=request.resource.group,
            name=request.name,
            functions=policyauthorizer.check_functions(self._authorize, request),
        )
        return invocation if holds else None

    def _call(
        self,
        invocation: Invocation,
        request: AdmissionRequest,
        outcome: AdmissionOutcome,
        *,
        mutating: bool,
    ) -> ReviewResponse | None:
        """Call one webhook; ``None`` when it failed and its policy is Ignore; raise the
        refusal or the failure otherwise."""
        webhook = invocation.webhook
        try:
            response = answered_call(self._client, invocation, request, _encoder, mutating=mutating)
        except CallingError as exc:
            if webhook.failure_policy == IGNORE:
                return None
            raise _with_warnings(errors.internal_error(str(exc)), outcome) from None
        for warning in response.warnings:
            if warning not in outcome.warnings:
                outcome.warnings.append(warning)
        if not response.allowed:
            raise _with_warnings(denial(webhook.name or "", response.result), outcome)
        return response


class MutatingWebhookPlugin(_WebhookPlugin):
    """MutatingAdmissionWebhook: calls mutating webhooks and applies their patches."""

    name = MUTATING_PLUGIN

    def __init__(
        self,
        listers: WebhookListers,
        client: WebhookClient,
        authorize: PolicyAuthorizer | None = None,
    ) -> None:
        super().__init__(
            listers, client, _Source(listers.mutating_webhook_configurations), authorize
        )

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Call the matching mutating webhooks in order; return the patched object."""
        candidates = self._candidates(self._source.index(), request)
        if not candidates:
            return request.obj
        state = outcome.plugin_state.get(MUTATING_PLUGIN)
        if not isinstance(state, _ReinvokeState):
            state = _ReinvokeState(last_output=request.obj)
            outcome.plugin_state[MUTATING_PLUGIN] = state
        if outcome.reinvoking and state.last_output != request.obj:
            # A built-in plugin changed the object since the webhooks' last round.
            state.require_reinvoking_previously_invoked()
        obj = request.obj
        for entry in candidates:
            current = request if obj is request.obj else dataclasses.replace(request, obj=obj)
            invocation = self._invocation(entry, current)
            if invocation is None:
                continue
            key = (entry.configuration, entry.position)
            if outcome.reinvoking and key not in state.to_reinvoke:
                continue
            response = self._call(invocation, current, outcome, mutating=True)
            patched = obj
            if response is not None and response.patch:
                try:
                    patched = self._apply(invocation, current, response)
                except CallingError as exc:
                    # An unsupported patch type counts as a failed call (upstream).
                    if invocation.webhook.failure_policy != IGNORE:
                        raise _with_warnings(errors.internal_error(str(exc)), outcome) from None
                if patched != obj:
                    obj = patched
                    state.require_reinvoking_previously_invoked()
                    outcome.reinvoke = True
            webhook = invocation.webhook
            if isinstance(webhook, MutatingWebhook) and webhook.reinvocation_policy == IF_NEEDED:
                state.previously_invoked.add(key)
        state.last_output = obj
        return obj

    @staticmethod
    def _apply(
        invocation: Invocation, request: AdmissionRequest, response: ReviewResponse
    ) -> object:
        """Apply a JSONPatch answer, decode and default the result (upstream's
        ``callAttrMutatingHook``)."""
        name = invocation.webhook.name or ""
        if response.patch_type != "JSONPatch":
            raise CallingError(name, f"unsupported patch type {go_quote(response.patch_type)}")
        try:
            operations = json.loads(response.patch)
        except ValueError as exc:
            raise errors.internal_error(str(exc)) from None
        if not operations:
            return request.obj
        obj = request.obj
        if obj is None:
            raise errors.internal_error(
                f"admission webhook {go_quote(name)} attempted to modify the object, which "
                "is not supported for this operation"
            )
        original = to_dict(obj)
        document = _encoder(obj, invocation) or {}
        try:
            patched = apply_json_patch(document, operations)
        except PatchError as exc:
            raise errors.internal_error(str(exc)) from None
        patched["apiVersion"] = original.get("apiVersion")
        try:
            decoded = from_dict(type(obj), patched)
        except DecodeError as exc:
            raise errors.internal_error(str(exc)) from None
        return default_object(decoded)


class ValidatingWebhookPlugin(_WebhookPlugin):
    """ValidatingAdmissionWebhook: calls every matching validating webhook."""

    name = VALIDATING_PLUGIN

    def __init__(
        self,
        listers: WebhookListers,
        client: WebhookClient,
        authorize: PolicyAuthorizer | None = None,
    ) -> None:
        super().__init__(
            listers, client, _Source(listers.validating_webhook_configurations), authorize
        )

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Call each matching webhook; raise the first refusal or failure in order. Under
        ``kubeprio serve`` the answers still missing are asked for all at once, so the
        webhooks are called in parallel (``admission.webhookdeferral``)."""
        candidates = self._candidates(self._source.index(), request)
        first: errors.StatusError | None = None
        pending: list[PendingCall] = []
        for entry in candidates:
            try:
                invocation = self._invocation(entry, request)
                if invocation is not None:
                    self._call(invocation, request, outcome, mutating=False)
            except PendingCallsError as deferred:
                pending.extend(deferred.calls)
            except errors.StatusError as exc:
                first = first or exc
        if pending:
            raise PendingCallsError(tuple(pending))
        if first is not None:
            raise _with_warnings(first, outcome)
