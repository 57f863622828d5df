"""Kubernetes' CEL ``format`` library (``api.celformat``).

Upstream v1.32 ``k8s.io/apiserver/pkg/cel/library/format.go`` (in the base environment
from compatibility version 1.31, ``pkg/cel/environment/base.go``): ``format.named``,
the ``format.<name>()`` constants and ``<Format>.validate`` returning
``optional<list<string>>``; messages are the validators' own (apimachinery's
``NameIsDNSLabel`` & co., ``IsQualifiedName``, ``IsValidLabelValue``,
``url.ParseRequestURI``, and ``format.go``'s ``does not match the UUID format``,
``invalid base64``, ``invalid date``, ``invalid datetime`` with kube-openapi ``strfmt``'s
rules). Rows follow ``format_test.go`` where it has them.
"""

from __future__ import annotations

import pytest

from kubeprio.api.celexpr import CompileError, ResultType, compile_expression, evaluate
from kubeprio.api.crdcel import compile_rule
from kubeprio.api.validation.meta import DNS1123_LABEL_ERROR, DNS1123_SUBDOMAIN_ERROR


def run(expression: str) -> tuple[object, str | None]:
    compiled = compile_expression(expression, ResultType.ANY, with_params=False)
    outcome = evaluate(compiled, {"object": {"metadata": {"name": "Bad_Name"}}})
    return outcome.value, outcome.error


VALID = [
    ("dns1123Label", "my-label-name"),
    ("dns1123Subdomain", "apiextensions.k8s.io"),
    ("dns1035Label", "my-label-name"),
    ("qualifiedName", "apiextensions.k8s.io/v1beta1"),
    ("dns1123LabelPrefix", "my-label-prefix-"),
    ("dns1123SubdomainPrefix", "mysubdomain.prefix.-"),
    ("dns1035LabelPrefix", "my-label-prefix-"),
    ("labelValue", "my-label-value"),
    ("uri", "http://example.com"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
    ("uuid", "123E4567E89B12D3A456426614174000"),
    ("byte", "aGVsbG8="),
    ("date", "2024-02-29"),
    ("datetime", "2021-01-01T00:00:00Z"),
    ("datetime", "2021-01-01t23:59:59.123+02:00"),
]


@pytest.mark.parametrize(("name", "text"), VALID)
def test_a_valid_string_gives_none(name: str, text: str) -> None:
    assert run(f"format.{name}().validate('{text}').hasValue()") == (False, None)
    assert run(f"format.named('{name}').value().validate('{text}').hasValue()") == (False, None)


@pytest.mark.parametrize(
    ("name", "text", "messages"),
    [
        ("dns1123Label", "MY", [DNS1123_LABEL_ERROR]),
        ("dns1123Label", "a" * 64, ["must be no more than 63 characters"]),
        ("dns1123Subdomain", "-x", [DNS1123_SUBDOMAIN_ERROR]),
        ("dns1123LabelPrefix", "-", [DNS1123_LABEL_ERROR]),
        ("qualifiedName", "", ["name part must be non-empty",
                                "name part must consist of alphanumeric characters, '-', '_' or '.', "
                                "and must start and end with an alphanumeric character (e.g. 'MyName',  "
                                "or 'my.name',  or '123-abc', regex used for validation is "
                                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
        ("uri", "example", ['parse "example": invalid URI for request']),
        ("uuid", "123e4567", ["does not match the UUID format"]),
        ("byte", "aGVsbG8", ["invalid base64"]),
        ("date", "2023-02-29", ["invalid date"]),
        ("date", "2021-1-01", ["invalid date"]),
        ("datetime", "2021-01-01 00:00:00", ["invalid datetime"]),
        ("datetime", "2021-01-01T24:00:00Z", ["invalid datetime"]),
    ],
)  # fmt: skip
def test_an_invalid_string_gives_the_validators_messages(
    name: str, text: str, messages: list[str]
) -> None:
    assert run(f"format.{name}().validate('{text}').value()") == (messages, None)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("format.named('dns1123Label').hasValue()", True),
        ("format.named('unknown').hasValue()", False),
        ("format.named('DNS1123Label').hasValue()", False),
        ("format.named('uuid').value() == format.uuid()", True),
        ("format.dns1123Label() == format.dns1123Subdomain()", False),
        ("format.named('x').orValue(format.dns1123Label()).validate('ok').hasValue()", False),
        # Nested: the receiver of validate is itself an optional-returning call.
        ("format.named(object.metadata.name).hasValue()", False),
        ("format.dns1123Label().validate(object.metadata.name).orValue([]).size()", 1),
        ("['a', 'B'].map(n, format.dns1123Label().validate(n).hasValue())", [False, True]),
        ("type(format.uri()) == kubernetes.NamedFormat", True),
    ],
)
def test_named_formats(expression: str, value: object) -> None:
    assert run(expression) == (value, None)


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ("format.dns1123Label().validate(1)",
         "compilation failed: ERROR: <input>:1:31: found no matching overload for 'validate' "
         "applied to 'kubernetes.NamedFormat.(int)'\n | format.dns1123Label().validate(1)\n"
         " | ..............................^"),
        ("format.named(1)",
         "compilation failed: ERROR: <input>:1:13: found no matching overload for "
         "'format.named' applied to '(int)'\n | format.named(1)\n | ............^"),
        ("'x'.validate('y')",
         "compilation failed: ERROR: <input>:1:13: found no matching overload for 'validate' "
         "applied to 'string.(string)'\n | 'x'.validate('y')\n | ............^"),
    ],
)  # fmt: skip
def test_wrong_argument_types_are_cel_gos_compile_errors(expression: str, detail: str) -> None:
    """cel-go's ``noMatchingOverload`` text (a member call: ``receiver.(args)``)."""
    with pytest.raises(CompileError) as raised:
        compile_expression(expression, ResultType.ANY, with_params=False)
    assert raised.value.detail == detail


def test_crd_rules_have_the_format_library() -> None:
    """The base environment is shared by CRD validation rules."""
    compiled = compile_rule("!format.dns1123Label().validate(self).hasValue()")
    assert compiled.error is None
