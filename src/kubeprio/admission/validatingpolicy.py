"""The ``ValidatingAdmissionPolicy`` admission plugin: CEL policies refuse, warn about or
audit writes.

Mirrors upstream v1.32 ``k8s.io/apiserver/pkg/admission/plugin/policy/validating``
(``dispatcher.Dispatch``) and ``generic.CollectParams``; on by default, validating
phase only, near the end of the chain (after every mutation, before ``ResourceQuota``):

* writes to the admission configuration kinds themselves are exempt
  (``IsExemptAdmissionConfigurationResource``);
* a request no policy's rules name (operation, group, resource) is let through after a
  few index lookups (``admission.policyindex``: a delete of a pod, when the policies are
  about ConfigMaps, reads no binding);
* for each policy (by name) whose ``matchConstraints`` match (``admission.policymatching``),
  each binding naming it whose ``matchResources`` match is evaluated with each of its
  parameters (``admission.policyevaluation``);
* **parameters**: a policy without ``paramKind`` runs once with no ``params``; a binding
  without ``paramRef`` once with ``params: null``; otherwise the object named (in
  ``paramRef.namespace``, else the request's namespace, for a namespaced kind) or every
  object the selector picks, each a separate evaluation. None found is a configuration
  error (``failed to configure binding: no params found for policy binding with `Deny`
  parameterNotFoundAction``) or, with ``Allow``, no evaluation;
* each failed validation goes where the binding's ``validationActions`` say: **Deny**
  refuses the write, **Warn** adds a ``Warning:`` header (``Validation failed for
  ValidatingAdmissionPolicy 'p' with binding 'b': <message>``), **Audit** an audit
  annotation ``validation.policy.admission.k8s.io/validation_failure``;
* configuration errors deny under ``failurePolicy: Fail`` whatever the actions, and are
  ignored under ``Ignore``;
* the first denial refuses the write: ``<resource> "<name>" is forbidden:
  ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>``, with the
  validation's ``reason`` (``Invalid``, 422, unless set) and the message as its one
  cause, which kubectl prints as ``The pods "x" is invalid: : ValidatingAdmissionPolicy
  ...`` (``Error from server (Forbidden): ...`` for ``reason: Forbidden``).

The ``authorizer`` variable asks the ``PolicyAuthorizer`` the composition root passes
(``admission.policyauthorizer``) for the request's user.

Reads policies, bindings, namespaces and parameters through the listers only.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from typing import Any, Final

from kubeprio.admission import policyauthorizer, policymatching
from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.admission.operationoptions import operation_options
from kubeprio.admission.policyauthorizer import PolicyAuthorizer
from kubeprio.admission.policyevaluation import DEFAULT_REASON, Decision, validate
from kubeprio.admission.policyindex import PolicyIndex, PolicyIndexSource
from kubeprio.admission.webhookmatching import request_kind
from kubeprio.api import errors, kinds
from kubeprio.api.admissionpolicy import (
    AUDIT,
    DENY,
    GROUP,
    IGNORE,
    WARN,
    ParamKind,
    ParamRef,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicySpec,
)
from kubeprio.api.celexpr import NAMESPACE_OBJECT, OBJECT, OLD_OBJECT, PARAMS, REQUEST
from kubeprio.api.core import Namespace
from kubeprio.api.meta import Status, StatusCause
from kubeprio.api.selectors import label_selector_as_selector
from kubeprio.api.serialization import to_dict

PLUGIN_NAME: Final = "ValidatingAdmissionPolicy"

VALIDATION_FAILURE_ANNOTATION: Final = "validation.policy.admission.k8s.io/validation_failure"

_EXEMPT_RESOURCES: Final = frozenset(
    {
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    }
)
_CODES: Final = {"Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


class ConfigurationError(Exception):
    """A policy or binding that cannot be evaluated (its text is upstream's)."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Denial:
    policy: str
    binding: str | None
    decision: Decision

    def text(self) -> str:
        if self.binding is None:
            return (
                f"ValidatingAdmissionPolicy '{self.policy}' denied request: {self.decision.message}"
            )
        return (
            f"ValidatingAdmissionPolicy '{self.policy}' with binding '{self.binding}' "
            f"denied request: {self.decision.message}"
        )


def _json_of(obj: object | None) -> object:
    if obj is None:
        return None
    encoded = to_dict(obj)
    encoded.get("metadata", {}).pop("managedFields", None)
    return encoded


def _request_json(request: AdmissionRequest) -> dict[str, Any]:
    """The ``admission.k8s.io/v1`` AdmissionRequest (``cel.CreateAdmissionRequest``)."""
    info = request.resource
    # A subresource with a body of its own kind (``pods/binding``, ``deployments/scale``)
    # names that kind, as the request's attributes do upstream.
    group, version, kind_name = request_kind(info, request.subresource)
    kind = {"group": group, "version": version, "kind": kind_name}
    resource = {"group": info.group, "version": info.version, "resource": info.plural}
    user = request.user
    user_info: dict[str, Any] = {}
    if user is not None:
        user_info = {"username": user.name, "uid": user.uid, "groups": list(user.groups)}
        if user.extra:
            user_info["extra"] = {key: list(values) for key, values in user.extra}
    return {
        "kind": kind,
        "resource": resource,
        "subResource": request.subresource,
        "requestKind": kind,
        "requestResource": resource,
        "requestSubResource": request.subresource,
        "name": request.name or _name_of(request),
        "namespace": request.namespace,
        "operation": request.operation.value,
        "userInfo": user_info,
        "dryRun": request.dry_run,
        "options": operation_options(request),
    }


def _name_of(request: AdmissionRequest) -> str:
    """A create's object names itself (upstream's handler takes the name from it); a
    DELETE's attributes carry only the request's name (``""`` in a deletecollection)."""
    if request.operation is Operation.DELETE:
        return ""
    metadata = getattr(
        request.obj if request.obj is not None else request.old_obj, "metadata", None
    )
    return (metadata.name or "") if metadata is not None else ""


def _param_info(kind: ParamKind) -> kinds.ResourceInfo:
    try:
        return kinds.for_kind(kind.api_version or "", kind.kind or "")
    except kinds.UnknownKindError:
        # The policy source's text: the GroupVersionKind as schema.GroupVersionKind prints.
        raise ConfigurationError(
            f"failed to find resource referenced by paramKind: "
            f"'{kind.api_version}, Kind={kind.kind}'"
        ) from None


class ValidatingAdmissionPolicyPlugin:
    """Validating only: evaluates the policies bound to the write."""

    name = PLUGIN_NAME

    def __init__(self, listers: Listers, authorize: PolicyAuthorizer | None = None) -> None:
        self._listers = listers
        self._index = PolicyIndexSource()
        self._authorize: PolicyAuthorizer = authorize or policyauthorizer.allow_all
        # The policies as last listed and their index, with the lister's generation then:
        # an unchanged set is neither listed nor signed again (client.versionedlister).
        self._policies: list[ValidatingAdmissionPolicy] = []
        self._policy_index = PolicyIndex(())
        self._policies_generation = -1

    def _params(
        self, kind: ParamKind | None, ref: ParamRef | None, namespace: str
    ) -> list[object | None]:
        """``CollectParams``: the parameter objects to evaluate with (``None`` for none)."""
        if kind is None or ref is None:
            return [None]
        info = _param_info(kind)
        lister = self._listers.of_kind(info)
        if info.namespaced:
            where = ref.namespace or namespace
            if not where:
                raise ConfigurationError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        elif ref.namespace:
            raise ConfigurationError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        else:
            where = None
        if ref.name:
            found = lister.get(ref.name, where)
            params: list[object | None] = [] if found is None else [found]
        else:
            selector = label_selector_as_selector(ref.selector)
            params = [
                item for item in lister.list(where) if selector.matches(item.metadata.labels or {})
            ]
        if not params and (ref.parameter_not_found_action or DENY) == DENY:
            raise ConfigurationError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return params

    def _candidates(self, operation: Operation, info: kinds.ResourceInfo) -> frozenset[str]:
        """The policies whose rules may name ``operation`` on ``info`` (none for the
        exempt admission-configuration resources; admission.policyindex)."""
        if info.group == GROUP and info.plural in _EXEMPT_RESOURCES:
            return frozenset()
        lister = self._listers.validating_admission_policies
        generation = lister.generation()
        if generation != self._policies_generation:
            self._policies = lister.list()
            self._policy_index = self._index.index(self._policies)
            self._policies_generation = generation
        return self._policy_index.candidates(operation.value, info.group, info.plural)

    def may_act(self, operation: Operation, info: kinds.ResourceInfo) -> bool:
        """Whether a policy's rules name ``operation`` on ``info`` (if not, ``validate``
        returns at once)."""
        return bool(self._candidates(operation, info))

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Evaluate every matching policy and binding; raise on the first denial."""
        candidates = self._candidates(request.operation, request.resource)
        if not candidates:
            return
        policies = self._policies
        bindings: defaultdict[str, list[ValidatingAdmissionPolicyBinding]] = defaultdict(list)
        for binding in self._listers.validating_admission_policy_bindings.list():
            if binding.spec is not None and binding.spec.policy_name:
                bindings[binding.spec.policy_name].append(binding)
        namespace: Namespace | None = None
        if request.namespace and request.resource.plural != "namespaces":
            namespace = self._listers.namespaces.get(request.namespace)
        denials: list[_Denial] = []
        activation: dict[str, object] | None = None
        functions: list[Any] = []
        for policy in policies:
            spec = policy.spec or ValidatingAdmissionPolicySpec()
            name = policy.metadata.name or ""
            if name not in candidates:
                continue
            if not bindings.get(name) or not policymatching.matches(
                spec.match_constraints, request, namespace
            ):
                continue
            if activation is None:
                activation = {
                    OBJECT: _json_of(request.obj),
                    OLD_OBJECT: _json_of(request.old_obj),
                    REQUEST: _request_json(request),
                    NAMESPACE_OBJECT: _json_of(namespace),
                    **policyauthorizer.activation_values(request, _name_of(request)),
                }
                functions = policyauthorizer.check_functions(self._authorize, request)
            self._evaluate_policy(
                policy,
                spec,
                bindings[name],
                request,
                namespace,
                (activation, functions),
                outcome,
                denials,
            )
        if denials:
            raise _denial_error(request, denials[0])

    def _evaluate_policy(
        self,
        policy: ValidatingAdmissionPolicy,
        spec: ValidatingAdmissionPolicySpec,
        bindings: list[ValidatingAdmissionPolicyBinding],
        request: AdmissionRequest,
        namespace: Namespace | None,
        bound: tuple[dict[str, object], list[Any]],
        outcome: AdmissionOutcome,
        denials: list[_Denial],
    ) -> None:
        """Each matching binding, with each of its parameters; ``bound`` is the
        request's activation and the functions bound to it."""
        activation, functions = bound
        name = policy.metadata.name or ""
        ignore = spec.failure_policy == IGNORE
        with_params = spec.param_kind is not None
        for binding in bindings:
            binding_spec = binding.spec
            assert binding_spec is not None
            binding_name = binding.metadata.name or ""
            if not policymatching.matches(binding_spec.match_resources, request, namespace):
                continue
            try:
                params = self._params(spec.param_kind, binding_spec.param_ref, request.namespace)
            except ConfigurationError as failure:
                if not ignore:
                    message = f"failed to configure binding: {failure}"
                    denials.append(_Denial(name, binding_name, Decision(message)))
                continue
            for param in params:
                if with_params:
                    activation = {**activation, PARAMS: _json_of(param)}
                result = validate(
                    name, spec, activation, with_params=with_params, functions=functions
                )
                outcome.annotations.update(result.audit_annotations)
                for decision in result.decisions:
                    self._act(name, binding, decision, outcome, denials)

    @staticmethod
    def _act(
        policy: str,
        binding: ValidatingAdmissionPolicyBinding,
        decision: Decision,
        outcome: AdmissionOutcome,
        denials: list[_Denial],
    ) -> None:
        spec = binding.spec
        assert spec is not None
        binding_name = binding.metadata.name or ""
        for action in spec.validation_actions or ():
            if action == DENY:
                denials.append(_Denial(policy, binding_name, decision))
            elif action == WARN:
                outcome.warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{policy}' with binding "
                    f"'{binding_name}': {decision.message}"
                )
            elif action == AUDIT:
                outcome.annotations[VALIDATION_FAILURE_ANNOTATION] = json.dumps(
                    [
                        {
                            "message": decision.message,
                            "policy": spec.policy_name,
                            "binding": binding_name,
                            "expressionIndex": decision.expression_index,
                            "validationActions": list(spec.validation_actions or ()),
                        }
                    ],
                    separators=(",", ":"),
                )


def _denial_error(request: AdmissionRequest, denial: _Denial) -> errors.StatusError:
    """``admission.NewForbidden`` with the decision's reason and code, the message its
    one cause."""
    text = denial.text()
    forbidden = errors.forbidden_error(
        request.resource.plural, request.resource.group, _error_name(request), text
    )
    reason = denial.decision.reason or DEFAULT_REASON
    details = forbidden.status.details
    assert details is not None
    status = Status(
        status="Failure",
        message=forbidden.message,
        reason=reason,
        details=dataclasses.replace(details, causes=(StatusCause(message=text),)),
        code=_CODES.get(reason, 500),
    )
    return errors.from_status(status)


def _error_name(request: AdmissionRequest) -> str:
    """``extractResourceName``: the request's name, else the object's, its generateName,
    else ``Unknown``."""
    if request.name:
        return request.name
    metadata = getattr(request.obj, "metadata", None)
    if metadata is not None:
        return metadata.name or metadata.generate_name or "Unknown"
    return "Unknown"
