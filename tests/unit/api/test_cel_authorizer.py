"""Kubernetes' CEL ``authorizer`` library (``api.celauthz``).

Upstream v1.32 ``k8s.io/apiserver/pkg/cel/library/authz.go`` (``Authz`` and
``AuthzSelectors``): the builder functions and their errors (``path must not be
empty``, ``resource must not be empty``, ``Invalid service account name``, ``Invalid
service account namespace``), the attributes each ``check`` sends to the authorizer
(``pathCheckVal.Authorize``, ``resourceCheckVal.Authorize``), and the ``Decision``
accessors. The authorizer here is a recording fake bound per evaluation, as
``admission.policyauthorizer`` binds the real one.
"""

from __future__ import annotations

import pytest

from kubeprio.api import celauthz
from kubeprio.api.celauthz import AuthorizationAnswer, AuthorizationRequest
from kubeprio.api.celexpr import CompileError, ResultType, compile_expression, evaluate


class Recorder:
    """Allows ``get`` (with a reason), refuses everything else, errs on ``explode``."""

    def __init__(self) -> None:
        self.asked: list[AuthorizationRequest] = []

    def __call__(self, check: AuthorizationRequest) -> AuthorizationAnswer:
        self.asked.append(check)
        if check.verb == "explode":
            return AuthorizationAnswer(False, error="webhook unreachable")
        if check.verb == "get":
            return AuthorizationAnswer(True, reason="allowed by test")
        return AuthorizationAnswer(False)


def run(expression: str, recorder: Recorder | None = None) -> tuple[object, str | None]:
    compiled = compile_expression(expression, ResultType.ANY, with_params=False)
    activation = {
        celauthz.AUTHORIZER: celauthz.authorizer_value(),
        celauthz.REQUEST_RESOURCE: celauthz.request_resource_value(
            "apps", "deployments", "scale", "team-a", "web"
        ),
    }
    functions = [celauthz.check_function(recorder or Recorder())]
    outcome = evaluate(compiled, activation, functions)
    return outcome.value, outcome.error


@pytest.mark.parametrize(
    ("expression", "asked"),
    [
        ("authorizer.path('/healthz').check('get').allowed()",
         AuthorizationRequest("get", resource_request=False, path="/healthz")),
        ("authorizer.group('').resource('pods').namespace('default').check('create').allowed()",
         AuthorizationRequest("create", resource="pods", namespace="default")),
        ("authorizer.group('apps').resource('deployments').subresource('scale')"
         ".namespace('test').name('backend').check('update').allowed()",
         AuthorizationRequest("update", group="apps", resource="deployments",
                              subresource="scale", namespace="test", name="backend")),
        ("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1')"
         ".labelSelector('app=web').check('list').allowed()",
         AuthorizationRequest("list", resource="pods", field_selector="spec.nodeName=n1",
                              label_selector="app=web")),
        ("authorizer.serviceAccount('default', 'builder').group('').resource('secrets')"
         ".check('list').allowed()",
         AuthorizationRequest("list", service_account=("default", "builder"), resource="secrets")),
        ("authorizer.serviceAccount('ns', 'sa').path('/metrics').check('get').allowed()",
         AuthorizationRequest("get", service_account=("ns", "sa"), resource_request=False,
                              path="/metrics")),
        ("authorizer.requestResource.check('delete').allowed()",
         AuthorizationRequest("delete", group="apps", resource="deployments",
                              subresource="scale", namespace="team-a", name="web")),
        ("authorizer.requestResource.subresource('').name('').check('list').allowed()",
         AuthorizationRequest("list", group="apps", resource="deployments", namespace="team-a")),
    ],
)  # fmt: skip
def test_each_check_asks_upstreams_attributes(expression: str, asked: AuthorizationRequest) -> None:
    recorder = Recorder()
    assert run(expression, recorder) == (asked.verb == "get", None)
    assert recorder.asked == [asked]


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("authorizer.path('/x').check('get').reason()", "allowed by test"),
        ("authorizer.path('/x').check('post').reason()", ""),
        ("authorizer.path('/x').check('get').errored()", False),
        ("authorizer.path('/x').check('get').error()", ""),
        ("authorizer.path('/x').check('explode').errored()", True),
        ("authorizer.path('/x').check('explode').error()", "webhook unreachable"),
        ("authorizer.path('/x').check('explode').allowed()", False),
        ("authorizer.group('').resource('pods').check('get').allowed() "
         "&& !authorizer.group('').resource('pods').check('delete').allowed()", True),
        ("type(authorizer) == kubernetes.authorization.Authorizer", True),
        ("type(authorizer.requestResource) == kubernetes.authorization.ResourceCheck", True),
    ],
)  # fmt: skip
def test_decisions(expression: str, value: object) -> None:
    assert run(expression) == (value, None)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("authorizer.path('').check('get').allowed()", "path must not be empty"),
        ("authorizer.path('   ').check('get').allowed()", "path must not be empty"),
        ("authorizer.group('').resource(' ').check('get').allowed()", "resource must not be empty"),
        ("authorizer.serviceAccount('default', 'invalid@*name').path('/').check('get').allowed()",
         "Invalid service account name"),
        ("authorizer.serviceAccount('not@a#valid!namespace', 'validname').path('/')"
         ".check('get').allowed()", "Invalid service account namespace"),
        ("authorizer.serviceAccount('Bad', 'bad_').path('/').check('get').allowed()",
         "Invalid service account name"),
    ],
)  # fmt: skip
def test_builder_errors(expression: str, error: str) -> None:
    assert run(expression) == (None, error)


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ("authorizer.group(1)",
         "compilation failed: ERROR: <input>:1:17: found no matching overload for 'group' "
         "applied to 'kubernetes.authorization.Authorizer.(int)'\n | authorizer.group(1)\n"
         " | ................^"),
        ("authorizer.group('').check('get')",
         "compilation failed: ERROR: <input>:1:27: found no matching overload for 'check' "
         "applied to 'kubernetes.authorization.GroupCheck.(string)'\n"
         " | authorizer.group('').check('get')\n | ..........................^"),
        ("authorizer.path('/').check('get')",
         "must evaluate to bool"),
    ],
)  # fmt: skip
def test_type_errors_are_compile_errors(expression: str, detail: str) -> None:
    with pytest.raises(CompileError) as raised:
        compile_expression(expression, ResultType.BOOL, with_params=False)
    assert raised.value.detail == detail


@pytest.mark.parametrize(
    ("expression", "value", "error"),
    [
        ("dyn(authorizer.path('/x')).check('get').allowed()", True, None),
        ("dyn(authorizer.group('')).check('get')", None, "no such overload"),
        ("dyn(authorizer).check('get')", None, "no such overload"),
    ],
)
def test_a_dyn_receiver_is_dispatched_by_its_message_type(
    expression: str, value: object, error: str | None
) -> None:
    """cel-go picks ``check``'s overload at run time for a ``dyn`` receiver; anything but
    a PathCheck or a ResourceCheck is ``no such overload``."""
    assert run(expression) == (value, error)
