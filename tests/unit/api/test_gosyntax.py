"""Go ``%#v`` rendering of bad values (``api.gosyntax``) and ``errors.format_value``.

Upstream rules: v1.32's ``field.Error.ErrorBody`` (apimachinery v0.32
``pkg/util/validation/field/errors.go``: nil is ``null``, a top-level pointer is followed,
strings ``%q``, numbers and bools ``%v``, anything else ``%#v``) and Go's ``fmt/print.go``
(``printValue``: sorted map keys, ``", "`` separators, ``T(nil)`` for nil maps and slices,
``(*T)(nil)`` for nil pointers, the element type repeated before each struct element).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import errors
from kubeprio.api.gosyntax import (
    GoAddressError,
    GoMap,
    GoPointer,
    GoSlice,
    GoStruct,
    go_syntax,
    int_or_string,
    string_map,
    string_slice,
)
from kubeprio.api.gotext import go_quote

REQUIREMENT = GoStruct(
    "v1.LabelSelectorRequirement",
    (("Key", "app"), ("Operator", "In"), ("Values", string_slice(["web", "db"]))),
)

RENDER_CASES: list[tuple[str, object, str]] = [
    ("string", 'say "hi"', '"say \\"hi\\""'),
    ("int", -3, "-3"),
    ("bool", True, "true"),
    ("nil map", string_map(None), "map[string]string(nil)"),
    ("empty map", string_map({}), "map[string]string{}"),
    (
        "map keys sorted, comma-space between entries",
        string_map({"tier": "x", "app": "web"}),
        'map[string]string{"app":"web", "tier":"x"}',
    ),
    ("named map type", GoMap("core.ResourceList", {}), "core.ResourceList{}"),
    ("nil slice", string_slice(None), "[]string(nil)"),
    ("empty slice", string_slice([]), "[]string{}"),
    ("slice", string_slice(["a", "b"]), '[]string{"a", "b"}'),
    (
        "slice of a named string type",
        GoSlice("[]core.IPFamily", ["IPv4"]),
        '[]core.IPFamily{"IPv4"}',
    ),
    (
        "struct elements repeat their type",
        GoSlice("[]v1.LabelSelectorRequirement", [REQUIREMENT]),
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"In", '
        'Values:[]string{"web", "db"}}}',
    ),
    (
        "nested nil pointer",
        GoStruct(
            "apps.DeploymentStrategy", (("Type", "X"), ("RollingUpdate", GoPointer("*apps.R")))
        ),
        'apps.DeploymentStrategy{Type:"X", RollingUpdate:(*apps.R)(nil)}',
    ),
    ("top-level nil pointer", GoPointer("*v1.LabelSelector"), "(*v1.LabelSelector)(nil)"),
    (
        "top-level pointer is followed (ErrorBody's Elem)",
        GoPointer("*intstr.IntOrString", int_or_string("25%")),
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}',
    ),
    ("int IntOrString", int_or_string(0), 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'),
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [case[1:] for case in RENDER_CASES],
    ids=[case[0] for case in RENDER_CASES],
)
def test_go_syntax_renders_as_percent_sharp_v(value, expected):
    assert go_syntax(value) == expected


def test_a_live_nested_pointer_has_no_reproducible_rendering():
    live = GoStruct("core.Taint", (("TimeAdded", GoPointer("*v1.Time", "2024-01-01T00:00:00Z")),))
    with pytest.raises(GoAddressError):
        go_syntax(live)
    # Callers that may hold one keep the JSON form instead.
    fallback = errors.go_value(live, {"TimeAdded": "2024-01-01T00:00:00Z"})
    assert fallback == errors.GoValue('{"TimeAdded":"2024-01-01T00:00:00Z"}')
    assert errors.go_value(string_map({"a": "b"}), {}) == errors.GoValue(
        'map[string]string{"a":"b"}'
    )


def test_an_untyped_python_value_is_refused():
    with pytest.raises(TypeError):
        go_syntax(GoSlice("[]float64", [1.5]))


FORMAT_CASES: list[tuple[str, object, str]] = [
    ("nil", None, "null"),
    ("string", "web", '"web"'),
    ("number", 2, "2"),
    ("bool", False, "false"),
    ("typed value", string_slice(None), "[]string(nil)"),
    ("already rendered", errors.GoValue("rbac.RoleRef{}"), "rbac.RoleRef{}"),
    ("untyped string map", {"b": "2", "a": "1"}, 'map[string]string{"a":"1", "b":"2"}'),
    ("untyped string list", ["10.96.0.10"], '[]string{"10.96.0.10"}'),
    ("other untyped shapes fall back to JSON", {"a": [1]}, '{"a":[1]}'),
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [case[1:] for case in FORMAT_CASES],
    ids=[case[0] for case in FORMAT_CASES],
)
def test_format_value_follows_v1_32_error_body(value, expected):
    assert errors.format_value(value) == expected


def test_the_deployment_errors_users_hit_most():
    """The two lines a v1.32 cluster prints for a mismatched and a changed selector."""
    labels = errors.invalid(
        "spec.template.metadata.labels",
        string_map({"app": "web"}),
        "`selector` does not match template `labels`",
    )
    assert str(labels) == (
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`"
    )
    selector = GoStruct(
        "v1.LabelSelector",
        (
            ("MatchLabels", string_map({"app": "web2"})),
            ("MatchExpressions", GoSlice("[]v1.LabelSelectorRequirement", None)),
        ),
    )
    assert str(errors.invalid("spec.selector", selector, "field is immutable")) == (
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":'
        '"web2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
    )


@given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=6))
def test_map_entries_print_in_sorted_key_order(entries):
    rendered = go_syntax(string_map(entries))
    body = ", ".join(f"{go_quote(k)}:{go_quote(entries[k])}" for k in sorted(entries))
    assert rendered == f"map[string]string{{{body}}}"
