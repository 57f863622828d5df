"""CEL as kube-apiserver compiles and runs it for admission policies (``api.celexpr``).

Upstream: ``k8s.io/apiserver/pkg/admission/plugin/cel/compile.go`` (``compilation
failed: `` + cel-go's issues; ``must evaluate to ...``), the Kubernetes list and regex
libraries (``k8s.io/apiserver/pkg/cel/library/lists.go``, ``regex.go``), and cel-go's
run-time error texts, which kubeprio reproduces where the C++ runtime words them
differently.
"""

from __future__ import annotations

import pytest

from kubeprio.api.celexpr import (
    CompileError,
    ResultType,
    compile_expression,
    evaluate,
    runtime_error_text,
)
from kubeprio.api.crdcel import compile_rule

OBJECT = {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 3}}


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("[3, 1, 2].isSorted()", False),
        ("[1, 2, 3].sum() == 6 && [4, 2].min() == 2 && [4, 2].max() == 4", True),
        ("'abc123def45'.find('[0-9]+') == '123'", True),
        ("'abc123def45'.findAll('[0-9]+') == ['123', '45']", True),
        ("'a1b2c3'.findAll('[0-9]', 2) == ['1', '2']", True),
        ("object.metadata.name.upperAscii() == 'WEB'", True),
        ("'a,b'.split(',').size() == 2 && ['a', 'b'].join('-') == 'a-b'", True),
        ("object.?spec.?replicas.orValue(0) == 3 && object.?nope.orValue(1) == 1", True),
        ("cel.bind(r, object.spec.replicas, r * r) == 9", True),
        ("math.greatest(1, object.spec.replicas) == 3", True),
        ("object.metadata.labels.all(k, k.startsWith('a'))", True),
    ],
)
def test_the_libraries_kubernetes_adds(expression: str, value: object) -> None:
    compiled = compile_expression(expression, ResultType.BOOL, with_params=False)
    assert evaluate(compiled, {"object": OBJECT}).value == value


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("object.spec.nope == 1", "no such key: nope"),
        ("object.spec.replicas / 0 == 1", "division by zero"),
        ("object.spec.replicas % 0 == 1", "modulus by zero"),
        ("object.metadata.name < 1", "no such overload"),
        ("[1][3] == 1", "index '3' out of range in list size '1'"),
        ("[].min() == 1", "min called on empty list"),
    ],
)
def test_run_time_errors_read_as_cel_go(expression: str, error: str) -> None:
    compiled = compile_expression(expression, ResultType.BOOL, with_params=False)
    assert evaluate(compiled, {"object": OBJECT}).error == error


@pytest.mark.parametrize(
    ("expression", "result", "detail"),
    [
        ("object", ResultType.BOOL, "must evaluate to bool"),
        ("1", ResultType.STRING, "must evaluate to string"),
        ("1", ResultType.STRING_OR_NULL, "must evaluate to one of [string null_type]"),
        ("params == null", ResultType.BOOL,
         "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' "
         "(in container '')\n | params == null\n | ^"),
        ("1 == 'a'", ResultType.BOOL,
         "compilation failed: ERROR: <input>:1:3: found no matching overload for '_==_' "
         "applied to '(int, string)'\n | 1 == 'a'\n | ..^"),
    ],
)  # fmt: skip
def test_compile_errors(expression: str, result: ResultType, detail: str) -> None:
    with pytest.raises(CompileError) as raised:
        compile_expression(expression, result, with_params=False)
    assert raised.value.detail == detail


def test_authorizer_is_declared_for_policies_only() -> None:
    """``authorizer`` is a policy variable (``admission/plugin/cel/compile.go``); CRD
    rules (``apiextensions-apiserver/pkg/apiserver/schema/cel``) have none."""
    compile_expression(
        "authorizer.group('').resource('pods').check('get').allowed()",
        ResultType.BOOL,
        with_params=False,
    )
    compiled = compile_rule("authorizer.group('').resource('pods').check('get').allowed()")
    assert compiled.error is not None
    assert compiled.error.startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer'"
    )


def test_variables_of_any_type_compile_and_null_is_a_string_or_null() -> None:
    compile_expression("object", ResultType.ANY, with_params=False)
    compiled = compile_expression("null", ResultType.STRING_OR_NULL, with_params=False)
    assert evaluate(compiled, {}).value is None


def test_unknown_runtime_texts_pass_through() -> None:
    assert runtime_error_text("INVALID_ARGUMENT: something else") == "something else"
