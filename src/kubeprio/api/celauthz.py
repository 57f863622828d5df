"""Kubernetes' CEL ``authorizer`` library, for ValidatingAdmissionPolicies.

Mirrors ``k8s.io/apiserver/pkg/cel/library/authz.go`` (``Authz``, in the base
environment since 1.27, and ``AuthzSelectors``, 1.31, on in v1.32 with the
``AuthorizeWithSelectors`` gate, beta and on by default):

* ``authorizer.path(p)`` (``path must not be empty`` for a blank path),
  ``authorizer.group(g)``, ``authorizer.serviceAccount(namespace, name)`` (``Invalid
  service account name`` unless a DNS subdomain, ``Invalid service account namespace``
  unless a DNS label; checked in that order);
* ``<GroupCheck>.resource(r)`` (``resource must not be empty``), then on the
  ``ResourceCheck``: ``subresource``, ``namespace``, ``name``, ``fieldSelector``,
  ``labelSelector``;
* ``<PathCheck>.check(httpVerb)`` and ``<ResourceCheck>.check(apiVerb)`` ask the
  authorizer (a resource check with API version ``*``) for the request's user, or for
  the service account's (``system:serviceaccount:<ns>:<name>``);
* ``<Decision>.allowed()``, ``.reason()`` (the authorizer's reason), ``.errored()``,
  ``.error()`` (``""`` without error);
* the variable ``authorizer.requestResource``: a ``ResourceCheck`` for the request's
  own group, resource, subresource, namespace and name.

The two ``check`` overloads take messages the runtime cannot tell apart, so they are a
``celenv.SharedFunction`` without implementation, bound per evaluation by
``check_function`` to the caller's authorizer (the admission layer's, which knows the
request's user). Everything else is pure. Types: ``api.celauthztypes``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celauthztypes, celenv, celtypes
from kubeprio.api.celformat import name_rules

AUTHORIZER: Final = "authorizer"
REQUEST_RESOURCE: Final = "authorizer.requestResource"

AUTHORIZER_TYPE: Final[Any] = cel.Type(celauthztypes.AUTHORIZER_NAME)
PATH_CHECK_TYPE: Final[Any] = cel.Type(celauthztypes.PATH_CHECK_NAME)
GROUP_CHECK_TYPE: Final[Any] = cel.Type(celauthztypes.GROUP_CHECK_NAME)
RESOURCE_CHECK_TYPE: Final[Any] = cel.Type(celauthztypes.RESOURCE_CHECK_NAME)
DECISION_TYPE: Final[Any] = cel.Type(celauthztypes.DECISION_NAME)


_AUTHORIZER: Final[Any] = celtypes.message_class(celauthztypes.AUTHORIZER_NAME)
_PATH_CHECK: Final[Any] = celtypes.message_class(celauthztypes.PATH_CHECK_NAME)
_GROUP_CHECK: Final[Any] = celtypes.message_class(celauthztypes.GROUP_CHECK_NAME)
_RESOURCE_CHECK: Final[Any] = celtypes.message_class(celauthztypes.RESOURCE_CHECK_NAME)
_DECISION: Final[Any] = celtypes.message_class(celauthztypes.DECISION_NAME)


@dataclasses.dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """What one ``check`` asks (upstream's ``AttributesRecord``): a path or a resource,
    for the request's user or, when ``service_account`` is set, for that account."""

    verb: str
    service_account: tuple[str, str] | None = None
    resource_request: bool = True
    path: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""
    label_selector: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class AuthorizationAnswer:
    """The authorizer's decision: allowed or not, its reason, and an error if any."""

    allowed: bool
    reason: str = ""
    error: str = ""


Authorize = Callable[[AuthorizationRequest], AuthorizationAnswer]


def authorizer_value() -> Any:
    """The ``authorizer`` variable: checks for the request's user."""
    return _AUTHORIZER()


def request_resource_value(
    group: str, resource: str, subresource: str, namespace: str, name: str
) -> Any:
    """The ``authorizer.requestResource`` variable (upstream ``NewResourceAuthorizerVal``)."""
    return _RESOURCE_CHECK(
        group_check=_GROUP_CHECK(authorizer=_AUTHORIZER(), group=group),
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


def _path(authorizer: Any, path: str) -> Any:
    if not path.strip():
        raise ValueError("path must not be empty")
    return _PATH_CHECK(authorizer=authorizer, path=path)


def _group(authorizer: Any, group: str) -> Any:
    return _GROUP_CHECK(authorizer=authorizer, group=group)


def _service_account(authorizer: Any, namespace: str, name: str) -> Any:
    rules = name_rules()
    if rules.name_is_dns_subdomain(name):
        raise ValueError("Invalid service account name")
    if rules.name_is_dns_label(namespace):
        raise ValueError("Invalid service account namespace")
    return _AUTHORIZER(service_account_namespace=namespace, service_account_name=name)


def _resource(group_check: Any, resource: str) -> Any:
    if not resource.strip():
        raise ValueError("resource must not be empty")
    return _RESOURCE_CHECK(group_check=group_check, resource=resource)


def _with(field: str) -> Callable[[Any, str], Any]:
    def setter(check: Any, value: str) -> Any:
        changed = _RESOURCE_CHECK()
        changed.CopyFrom(check)
        setattr(changed, field, value)
        return changed

    return setter


def _account(authorizer: Any) -> tuple[str, str] | None:
    if not authorizer.service_account_name:
        return None
    return (str(authorizer.service_account_namespace), str(authorizer.service_account_name))


def path_request(check: Any, verb: str) -> AuthorizationRequest:
    """What ``<PathCheck>.check(verb)`` asks."""
    return AuthorizationRequest(
        verb=verb,
        service_account=_account(check.authorizer),
        resource_request=False,
        path=str(check.path),
    )


def resource_request(check: Any, verb: str) -> AuthorizationRequest:
    """What ``<ResourceCheck>.check(verb)`` asks."""
    return AuthorizationRequest(
        verb=verb,
        service_account=_account(check.group_check.authorizer),
        group=str(check.group_check.group),
        resource=str(check.resource),
        subresource=str(check.subresource),
        namespace=str(check.namespace),
        name=str(check.name),
        field_selector=str(check.field_selector),
        label_selector=str(check.label_selector),
    )


def _decision(answer: AuthorizationAnswer) -> Any:
    return _DECISION(allowed=answer.allowed, reason=answer.reason, error=answer.error)


_CHECK_VARIANTS: Final = (
    celenv.Variant("pathcheck_check", DECISION_TYPE, (PATH_CHECK_TYPE, cel.Type.STRING)),
    celenv.Variant("resourcecheck_check", DECISION_TYPE, (RESOURCE_CHECK_TYPE, cel.Type.STRING)),
)
"""The two ``check`` overloads, without implementation: the checker declares both; an
evaluation binds them to its authorizer (``check_function``)."""


def check_function(authorize: Authorize) -> Any:
    """The ``check`` implementation for one evaluation: ``authorize`` answers for the
    request's user (``Expression.eval(functions=[...])``). The overloads' implementations
    need the request's authorizer, so they cannot be bound when the environment is built
    (``SharedFunction.running`` leaves them out); the same type-name dispatch
    (``celenv.dispatcher``) is built here for each evaluation instead."""
    path_variant, resource_variant = _CHECK_VARIANTS
    dispatch = celenv.dispatcher(
        (
            dataclasses.replace(
                path_variant,
                impl=lambda target, verb: _decision(authorize(path_request(target, verb))),
            ),
            dataclasses.replace(
                resource_variant,
                impl=lambda target, verb: _decision(authorize(resource_request(target, verb))),
            ),
        )
    )
    return cel.Function("check", list(path_variant.params), True, dispatch, DECISION_TYPE)


def _member(name: str, overload: str, result: Any, params: list[Any], impl: Any) -> Any:
    return cel.FunctionDecl(
        name, [cel.Overload(overload, result, params, is_member=True, impl=impl)]
    )


def declarations() -> list[Any]:
    """Every function of the library but ``check`` (``shared_declarations``)."""
    string, boolean = cel.Type.STRING, cel.Type.BOOL
    resource_check = RESOURCE_CHECK_TYPE
    setters = [
        ("subresource", "resourcecheck_subresource", "subresource"),
        ("namespace", "resourcecheck_namespace", "namespace"),
        ("name", "resourcecheck_name", "name"),
        ("fieldSelector", "authorizer_fieldselector", "field_selector"),
        ("labelSelector", "authorizer_labelselector", "label_selector"),
    ]
    return [
        _member("path", "authorizer_path", PATH_CHECK_TYPE, [AUTHORIZER_TYPE, string], _path),
        _member("group", "authorizer_group", GROUP_CHECK_TYPE, [AUTHORIZER_TYPE, string], _group),
        _member(
            "serviceAccount",
            "authorizer_serviceaccount",
            AUTHORIZER_TYPE,
            [AUTHORIZER_TYPE, string, string],
            _service_account,
        ),
        _member(
            "resource", "groupcheck_resource", resource_check, [GROUP_CHECK_TYPE, string], _resource
        ),
        *(
            _member(name, overload, resource_check, [resource_check, string], _with(field))
            for name, overload, field in setters
        ),
        _member("allowed", "decision_allowed", boolean, [DECISION_TYPE], lambda d: d.allowed),
        _member("reason", "decision_reason", string, [DECISION_TYPE], lambda d: d.reason),
        _member("errored", "decision_errored", boolean, [DECISION_TYPE], lambda d: bool(d.error)),
        _member("error", "decision_error", string, [DECISION_TYPE], lambda d: d.error),
    ]


def shared_declarations() -> list[celenv.SharedFunction]:
    """``check`` on a ``PathCheck`` or a ``ResourceCheck``, bound per evaluation."""
    return [celenv.SharedFunction("check", True, _CHECK_VARIANTS)]
