"""Label and field selectors behave exactly as k8s.io/apimachinery (v1.35 line).

Cases are ported from upstream tests, named in each table's comment:
``pkg/labels/selector_test.go``, ``pkg/fields/selector_test.go``,
``pkg/apis/meta/v1/helpers_test.go`` and ``pkg/api/validate/content/kube_test.go``.
Error texts are upstream's, checked verbatim (kubectl prints them to users).
"""

from __future__ import annotations

import copy
import pickle
import re
import timeit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import meta
from kubeprio.api.fieldselectors import (
    FieldRequirement,
    FieldSelector,
    escape_field_value,
    parse_field_selector,
)
from kubeprio.api.labelparser import parse_label_selector
from kubeprio.api.selectors import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Nothing,
    Operator,
    Requirement,
    SelectorError,
    label_selector_as_selector,
    label_selector_from_match,
    label_selector_from_set,
    new_requirement,
    validate_label_key,
    validate_label_value,
)

# Upstream message fragments, spelled out here rather than imported from the module.
NAME_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_REGEX = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def req(key: str, op: Operator, *values: str) -> Requirement:
    return Requirement(key, op, values)


# --- label key / value validation (content/kube_test.go TestIsLabelKey, TestIsLabelValue)


@pytest.mark.parametrize(
    "key",
    [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now-with-dashes/now-with-dashes",
        "now.with.dots/simple",
        "1.2.3.4/5678",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "requests.storage-foo",
        "a" * 63,
        "a" * 253 + "/" + "b" * 63,
    ],
)
def test_valid_label_keys_have_no_errors(key: str) -> None:
    assert validate_label_key(key) == []


@pytest.mark.parametrize(
    ("key", "errors"),
    [
        pytest.param("nospecialchars%^=@", [f"name part {NAME_REGEX}"], id="special-chars"),
        pytest.param("cantendwithadash-", [f"name part {NAME_REGEX}"], id="trailing-dash"),
        pytest.param("-cantstartwithadash-", [f"name part {NAME_REGEX}"], id="leading-dash"),
        pytest.param(
            "only/one/slash",
            [
                f"a valid label key {NAME_REGEX} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"
            ],
            id="two-slashes",
        ),
        pytest.param("Example.com/abc", [f"prefix part {SUBDOMAIN_REGEX}"], id="uppercase-prefix"),
        pytest.param("example_com/abc", [f"prefix part {SUBDOMAIN_REGEX}"], id="underscore-prefix"),
        pytest.param(
            "example.com/",
            ["name part must be non-empty", f"name part {NAME_REGEX}"],
            id="empty-name",
        ),
        pytest.param("/simple", ["prefix part must be non-empty"], id="empty-prefix"),
        pytest.param("a" * 64, ["name part must be no more than 63 characters"], id="name-64"),
        pytest.param(
            "a" * 254 + "/abc",
            [f"prefix part must be no more than 253 characters"],  # noqa: F541 - reads as a message
            id="prefix-254",
        ),
        pytest.param(
            "é" * 32,
            ["name part must be no more than 63 characters", f"name part {NAME_REGEX}"],
            id="bytes-not-characters",
        ),
    ],
)
def test_invalid_label_keys_give_upstream_messages(key: str, errors: list[str]) -> None:
    assert validate_label_key(key) == errors


@pytest.mark.parametrize(
    "value",
    ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", "a" * 63, ""],
)
def test_valid_label_values_have_no_errors(value: str) -> None:
    assert validate_label_value(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        pytest.param("nospecialchars%^=@", [VALUE_REGEX], id="special-chars"),
        pytest.param("Tama-nui-te-rā.is.Māori.sun", [VALUE_REGEX], id="non-ascii"),
        pytest.param("\\backslashes\\are\\bad", [VALUE_REGEX], id="backslash"),
        pytest.param("-starts-with-dash", [VALUE_REGEX], id="leading-dash"),
        pytest.param("ends.with.dot.", [VALUE_REGEX], id="trailing-dot"),
        pytest.param("a" * 64, ["must be no more than 63 characters"], id="too-long"),
    ],
)
def test_invalid_label_values_give_upstream_messages(value: str, errors: list[str]) -> None:
    assert validate_label_value(value) == errors


# --- labels.Parse: accepted input and its String() form (TestSelectorParse, TestSetSelectorParser)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("", ""),
        ("x!=a,y=b", "x!=a,y=b"),
        ("x=", "x="),
        ("x= ", "x="),
        ("x=,z= ", "x=,z="),
        ("x= ,z= ", "x=,z="),
        ("!x", "!x"),
        ("x>1", "x>1"),
        ("x>1,z<5", "x>1,z<5"),
        ("x==a", "x==a"),
        ("\rx", "x"),
        ("this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
        ),
        ("foo  in\t (abc)", "foo in (abc)"),
        ("x notin\n (abc)", "x notin (abc)"),
        ("x in (abc,)", "x in (,abc)"),
        ("x in (abc,abc)", "x in (abc)"),
        ("x in ()", "x in ()"),
        ("x in (a,,,,,,)", "x in (,a)"),
        ("x in (a,,a,,a,,a,,)", "x in (,a)"),
        ("x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"),
        ("x,y in (a)", "x,y in (a)"),
        ("x notin ( )", "x notin ()"),
        ("x notin (, a)", "x notin (,a)"),
        ("a ", "a"),
        ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
        ("notin=in", "notin=in"),
        ("x=a,a=x", "a=x,x=a"),
        ("z!=a,z", "z!=a,z"),  # equal keys keep their order (stable sort)
        ("a=\x00b", "a=b"),  # a NUL inside a token ends it and is dropped, as upstream
        ("a=b \x00 junk", "a=b"),  # a NUL where a token starts ends the input
    ],
    ids=repr,
)
def test_parse_label_selector_round_trips_to_upstream_string(text: str, canonical: str) -> None:
    selector = parse_label_selector(text)
    assert str(selector) == canonical
    assert parse_label_selector(canonical) == selector


@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        pytest.param("", (), id="empty"),
        pytest.param("x", (req("x", Operator.EXISTS),), id="exists"),
        pytest.param("!x", (req("x", Operator.DOES_NOT_EXIST),), id="does-not-exist"),
        pytest.param("x=a", (req("x", Operator.EQUALS, "a"),), id="equals"),
        pytest.param("x==a", (req("x", Operator.DOUBLE_EQUALS, "a"),), id="double-equals"),
        pytest.param("x=", (req("x", Operator.EQUALS, ""),), id="empty-value"),
        pytest.param("x>1", (req("x", Operator.GREATER_THAN, "1"),), id="gt"),
        pytest.param("x<7", (req("x", Operator.LESS_THAN, "7"),), id="lt"),
        pytest.param(
            "x in (b,a,b)", (req("x", Operator.IN, "a", "b"),), id="in-sorted-deduplicated"
        ),
        pytest.param("x in ()", (req("x", Operator.IN, ""),), id="in-empty-set-holds-empty-string"),
        pytest.param(
            "x=a,y!=b,z in (h,i,j)",
            (
                req("x", Operator.EQUALS, "a"),
                req("y", Operator.NOT_EQUALS, "b"),
                req("z", Operator.IN, "h", "i", "j"),
            ),
            id="mixed",
        ),
        pytest.param(
            "x,y in (a)",
            (req("x", Operator.EXISTS), req("y", Operator.IN, "a")),
            id="sorted-by-key",
        ),
        pytest.param("in in (in)", (req("in", Operator.IN, "in"),), id="keyword-as-key-and-value"),
    ],
)
def test_parse_label_selector_builds_requirements(
    text: str, requirements: tuple[Requirement, ...]
) -> None:
    assert parse_label_selector(text).requirements == requirements


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "x=a||y=b",
            f'unable to parse requirement: values[0][x]: Invalid value: "a||y": {VALUE_REGEX}',
        ),
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        (
            "x<a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "x>",
            'unable to parse requirement: values[0]: Invalid value: "": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "x>99999999999999999999",
            'unable to parse requirement: values[0]: Invalid value: "99999999999999999999": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("x>-1", f'unable to parse requirement: values[0][x]: Invalid value: "-1": {VALUE_REGEX}'),
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
        (
            "x nott in (y)",
            f"unable to parse requirement: found 'nott', expected: {BINARY_OPERATORS}",
        ),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
        ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
        ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (x,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a (", f"unable to parse requirement: found '(', expected: {BINARY_OPERATORS}"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("x=(", "unable to parse requirement: found '(', expected: identifier"),
        ("x<=5", "unable to parse requirement: found '=', expected: identifier"),
        ("a\x00b", f"unable to parse requirement: found 'b', expected: {BINARY_OPERATORS}"),
        (
            "app:monolith",
            f'unable to parse requirement: <nil>: Invalid value: "app:monolith": name part {NAME_REGEX}',
        ),
        (
            'a"b',
            f'unable to parse requirement: <nil>: Invalid value: "a\\"b": name part {NAME_REGEX}',
        ),
        (
            "a/b/c ?=? def",
            'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key '
            f"{NAME_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
        (
            "x" * 64,
            f'unable to parse requirement: <nil>: Invalid value: "{"x" * 64}": '
            "name part must be no more than 63 characters",
        ),
    ],
    ids=repr,
)
def test_parse_label_selector_rejects_with_upstream_message(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_label_selector(text)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


# --- matching (TestSelectorMatches, TestRequirementSelectorMatching)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x", {"x": "z"}, True),
        ("!x", {"y": "z"}, True),
        ("x>1", {"x": "2"}, True),
        ("x<1", {"x": "0"}, True),
        ("x=z", {}, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x", {"y": "z"}, False),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "0"}, False),
        ("x<1", {"x": "2"}, False),
        ("x>1", {"x": "1"}, False),
        ("x<1", {"x": "1"}, False),
        ("x>1", {"x": "01"}, False),
        ("x>0", {"x": "1"}, True),
        ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
        ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
        ("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
        ("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
        ("x notin (),y", {"y": ""}, True),
        ("!x,y", {"y": ""}, True),
        ("x notin (),!y", {"y": ""}, False),
        ("x in ()", {"y": "baz"}, False),
        ("x in ()", {"x": ""}, True),
        ("x=", {}, False),  # "=" needs the key, even for the empty value
        ("x!=a", {}, True),  # "!=" and notin match a missing key
        ("x notin (a,b)", {}, True),
        ("z>1", {"z": "v2"}, False),
        ("z>1", {"z": "+2"}, True),  # strconv.ParseInt accepts a sign
        ("z<1", {"z": "-20"}, True),
        ("z>1", {"z": "99999999999999999999"}, False),  # outside int64: not a number
        ("z>1", {"z": "1_0"}, False),  # Python's int() would accept this; Go does not
        ("z>1", {"z": " 5"}, False),
        ("x in (a,b,c)", {"x": "b"}, True),
        ("x notin (a,b,c)", {"x": "b"}, False),
    ],
    ids=repr,
)
def test_label_selector_matches_like_upstream(
    text: str, labels: dict[str, str], expected: bool
) -> None:
    assert parse_label_selector(text).matches(labels) is expected


# --- Requirement.String and NewRequirement (TestToString, TestRequirementConstructor)


@pytest.mark.parametrize(
    ("requirements", "text"),
    [
        (
            (
                req("x", Operator.IN, "def", "abc"),
                req("y", Operator.NOT_IN, "jkl"),
                req("z", Operator.EXISTS),
            ),
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            (
                req("x", Operator.NOT_IN, "abc", "def"),
                req("y", Operator.NOT_EQUALS, "jkl"),
                req("z", Operator.DOES_NOT_EXIST),
            ),
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            (
                req("x", Operator.NOT_IN, "abc"),
                req("y", Operator.IN, "jkl", "mno"),
                req("z", Operator.NOT_IN, ""),
            ),
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            (
                req("x", Operator.EQUALS, "abc"),
                req("y", Operator.DOUBLE_EQUALS, "jkl"),
                req("z", Operator.NOT_EQUALS, "a"),
                req("z", Operator.EXISTS),
            ),
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            (
                req("x", Operator.GREATER_THAN, "2"),
                req("y", Operator.LESS_THAN, "8"),
                req("z", Operator.EXISTS),
            ),
            "x>2,y<8,z",
        ),
        ((req("z", Operator.EXISTS), req("a", Operator.EXISTS)), "a,z"),
    ],
    ids=["in-notin-exists", "notin-ne-dne", "empty-value-set", "equals-forms", "gt-lt", "sorted"],
)
def test_label_selector_string_is_upstream_form(
    requirements: tuple[Requirement, ...], text: str
) -> None:
    assert str(LabelSelector(requirements)) == text


@pytest.mark.parametrize(
    ("key", "op", "values", "message"),
    [
        (
            "x1",
            Operator.IN,
            (),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "x2",
            Operator.NOT_IN,
            (),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "x5",
            Operator.EQUALS,
            ("bar", "foo"),
            'values: Invalid value: []string{"bar", "foo"}: exact-match compatibility requires one single value',
        ),
        (
            "x8",
            Operator.EXISTS,
            ("foo",),
            'values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist',
        ),
        (
            "x13",
            Operator.GREATER_THAN,
            (),
            "values: Invalid value: []string{}: for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            "x14",
            Operator.GREATER_THAN,
            ("bar",),
            "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a" * 254,
            Operator.EXISTS,
            (),
            f'key: Invalid value: "{"a" * 254}": name part must be no more than 63 characters',
        ),
        (
            "x16",
            Operator.EQUALS,
            ("a" * 254,),
            f'values[0][x16]: Invalid value: "{"a" * 254}": must be no more than 63 characters',
        ),
        ("x17", Operator.EQUALS, ("a b",), f'values[0][x17]: Invalid value: "a b": {VALUE_REGEX}'),
        (
            "x18",
            Operator.IN,
            ("<b>", "a&b"),
            f'[values[0][x18]: Invalid value: "<b>": {VALUE_REGEX}, '
            f'values[1][x18]: Invalid value: "a&b": {VALUE_REGEX}]',
        ),
        (
            "x19",
            Operator.EQUALS,
            ("<b>", "c"),
            '[values: Invalid value: []string{"<b>", "c"}: exact-match compatibility requires '
            f'one single value, values[0][x19]: Invalid value: "<b>": {VALUE_REGEX}]',
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None,
)
def test_new_requirement_rejects_with_upstream_message(
    key: str, op: Operator, values: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SelectorError) as caught:
        new_requirement(key, op, values)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("key", "op", "values"),
    [
        ("x3", Operator.IN, ("foo",)),
        ("x4", Operator.NOT_IN, ("foo",)),
        ("x6", Operator.EXISTS, ()),
        ("x7", Operator.DOES_NOT_EXIST, ()),
        ("x11", Operator.GREATER_THAN, ("1",)),
        ("x12", Operator.LESS_THAN, ("6",)),
        ("x", Operator.IN, ("b", "a")),
    ],
    ids=str,
)
def test_new_requirement_accepts_valid_input_and_keeps_value_order(
    key: str, op: Operator, values: tuple[str, ...]
) -> None:
    assert new_requirement(key, op, values) == Requirement(key, op, values)


def test_requirement_matches_on_its_own_and_takes_any_sequence() -> None:
    requirement = Requirement("tier", Operator.NOT_IN, ["db", "cache"])  # type: ignore[arg-type]
    assert requirement.values == ("db", "cache")
    assert requirement.matches({"tier": "web"})
    assert not requirement.matches({"tier": "db"})


@pytest.mark.parametrize(
    "requirement",
    [
        req("z", Operator.GREATER_THAN, "v"),
        req("z", Operator.LESS_THAN, "1", "2"),
        req("z", Operator.GREATER_THAN),
    ],
    ids=str,
)
def test_unvalidated_ordering_requirement_never_matches(requirement: Requirement) -> None:
    assert not requirement.matches({"z": "5"})
    assert not requirement.matches({"z": "-5"})


def test_error_values_are_quoted_as_go_does() -> None:
    key = "a\tb\x01\u00a0\ue000\U000f0000\\\udcff\ud800"
    quoted = '"a\\tb\\x01\\u00a0\\ue000\\U000f0000\\\\\\xff\\xed\\xa0\\x80"'
    with pytest.raises(SelectorError) as caught:
        label_selector_from_match({key: "v"}, None)
    assert str(caught.value).startswith(f"key: Invalid value: {quoted}: name part ")


@pytest.mark.parametrize("text", ["", "app=web", "x in (a,b),!y,z>3", "tier notin (db)"], ids=repr)
def test_label_selector_survives_pickle_and_copy(text: str) -> None:
    selector = parse_label_selector(text)
    for clone in (pickle.loads(pickle.dumps(selector)), copy.deepcopy(selector)):
        assert clone == selector
        assert clone.matches({"app": "web", "x": "a", "z": "4"}) == selector.matches(
            {"app": "web", "x": "a", "z": "4"}
        )
    assert pickle.loads(pickle.dumps(NOTHING)) == NOTHING


# --- RequiresExactMatch (labels TestRequiresExactMatch)


@pytest.mark.parametrize(
    ("selector", "key", "value"),
    [
        pytest.param(
            LabelSelector((req("key", Operator.IN, "value"),)), "key", "value", id="in-single"
        ),
        pytest.param(
            LabelSelector((req("key", Operator.IN, "value", "value2"),)), "key", None, id="in-two"
        ),
        pytest.param(
            LabelSelector(
                (req("key", Operator.IN, "value", "value1"), req("key2", Operator.IN, "value2"))
            ),
            "key2",
            "value2",
            id="second-key",
        ),
        pytest.param(
            LabelSelector((req("key", Operator.EQUALS, "value"),)), "key", "value", id="equals"
        ),
        pytest.param(
            LabelSelector((req("key", Operator.DOUBLE_EQUALS, "value"),)),
            "key",
            "value",
            id="double-equals",
        ),
        pytest.param(
            LabelSelector((req("key", Operator.NOT_EQUALS, "value"),)), "key", None, id="not-equals"
        ),
        pytest.param(
            LabelSelector((req("key", Operator.EXISTS), req("key", Operator.EQUALS, "v"))),
            "key",
            None,
            id="only-first-requirement-of-key-counts",
        ),
        pytest.param(EVERYTHING, "key", None, id="everything"),
        pytest.param(NOTHING, "key", None, id="nothing"),
    ],
)
def test_label_selector_value_for_reports_exact_match(
    selector: LabelSelector | Nothing, key: str, value: str | None
) -> None:
    assert selector.value_for(key) == value


# --- Everything, Nothing and sets (TestEverything, TestMatchesNothing, TestSetMatches)


def test_everything_and_nothing_are_opposites() -> None:
    assert EVERYTHING.matches({"x": "y"})
    assert EVERYTHING.matches({})
    assert EVERYTHING.is_empty()
    assert str(EVERYTHING) == ""
    assert parse_label_selector("") == EVERYTHING
    assert not NOTHING.matches({"x": "y"})
    assert not NOTHING.matches({})
    assert not NOTHING.is_empty()
    assert str(NOTHING) == ""
    assert Nothing() == NOTHING


@pytest.mark.parametrize(
    ("selector_set", "expected"),
    [
        ({}, True),
        ({"foo": "bar"}, True),
        ({"foo": "bar", "baz": "blah"}, True),
        ({"foo": "blah"}, False),
    ],
    ids=str,
)
def test_label_selector_from_set_matches_subsets(
    selector_set: dict[str, str], expected: bool
) -> None:
    selector = label_selector_from_set(selector_set)
    assert selector.matches({"foo": "bar", "baz": "blah"}) is expected
    assert selector.is_empty() is (not selector_set)


def test_label_selector_from_set_string_is_sorted() -> None:
    assert str(label_selector_from_set({"app": "foo", "a": "b"})) == "a=b,app=foo"


# --- LabelSelectorAsSelector (helpers_test.go TestLabelSelectorAsSelector)

MatchExpressions = list[tuple[str, str, list[str] | None]]


@pytest.mark.parametrize(
    ("match_labels", "match_expressions", "text", "selects_all"),
    [
        pytest.param({}, None, "", True, id="empty-labels-is-everything"),
        pytest.param(None, [], "", True, id="empty-expressions-is-everything"),
        pytest.param({"foo": "bar"}, None, "foo=bar", False, id="match-labels"),
        pytest.param(
            None, [("baz", "In", ["qux", "norf"])], "baz in (norf,qux)", False, id="expressions"
        ),
        pytest.param(
            {"foo": "bar"},
            [("baz", "In", ["qux", "norf"])],
            "baz in (norf,qux),foo=bar",
            False,
            id="both",
        ),
        pytest.param(
            None,
            [("k", "DoesNotExist", None), ("a", "NotIn", ["z", "y"]), ("e", "Exists", [])],
            "a notin (y,z),e,!k",
            False,
            id="every-operator",
        ),
    ],
)
def test_label_selector_from_match_converts_like_upstream(
    match_labels: dict[str, str] | None,
    match_expressions: MatchExpressions | None,
    text: str,
    selects_all: bool,
) -> None:
    selector = label_selector_from_match(match_labels, match_expressions)
    assert isinstance(selector, LabelSelector)
    assert str(selector) == text
    assert selector.is_empty() is selects_all


def test_label_selector_from_match_keeps_expression_values_as_given() -> None:
    selector = label_selector_from_match(None, [("baz", "In", ["qux", "norf"])])
    assert selector == LabelSelector((req("baz", Operator.IN, "qux", "norf"),))
    assert selector.matches({"baz": "norf"})
    assert not selector.matches({"baz": "other"})


def test_label_selector_from_match_with_no_selector_matches_nothing() -> None:
    assert label_selector_from_match(None, None) is NOTHING


@pytest.mark.parametrize(
    ("match_labels", "match_expressions", "message"),
    [
        pytest.param(
            None,
            [("baz", "Exists", ["qux", "norf"])],
            'values: Invalid value: []string{"qux", "norf"}: values set must be empty for exists and does not exist',
            id="exists-with-values",
        ),
        pytest.param(
            None,
            [("baz", "In", None)],
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            None,
            [("baz", "NotIn", [])],
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            id="notin-with-empty-values",
        ),
        pytest.param(
            None,
            [("baz", "foo", None)],
            '"foo" is not a valid label selector operator',
            id="bad-operator",
        ),
        pytest.param(
            None,
            [("baz", "in", ["a"])],
            '"in" is not a valid label selector operator',
            id="wire-spelling",
        ),
        pytest.param(
            None,
            [("Bad Key", "Gt", ["1"])],
            '"Gt" is not a valid label selector operator',
            id="gt-not-allowed",
        ),
        pytest.param(
            {"a": "b c"},
            None,
            f'values[0][a]: Invalid value: "b c": {VALUE_REGEX}',
            id="bad-label-value",
        ),
        pytest.param(
            {"": "x"},
            None,
            f'key: Invalid value: "": name part must be non-empty; name part {NAME_REGEX}',
            id="empty-key",
        ),
        pytest.param(
            {"z": "b c", "a": "d e"},
            None,
            f'values[0][a]: Invalid value: "d e": {VALUE_REGEX}',
            id="labels-checked-in-key-order",
        ),
    ],
)
def test_label_selector_from_match_rejects_with_upstream_message(
    match_labels: dict[str, str] | None, match_expressions: MatchExpressions | None, message: str
) -> None:
    with pytest.raises(SelectorError) as caught:
        label_selector_from_match(match_labels, match_expressions)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(None, NOTHING, id="nil-matches-nothing"),
        pytest.param(meta.LabelSelector(), EVERYTHING, id="empty-object-matches-everything"),
        pytest.param(
            meta.LabelSelector(
                match_labels={"app": "web"},
                match_expressions=(
                    meta.LabelSelectorRequirement(key="tier", operator="NotIn", values=("db",)),
                ),
            ),
            LabelSelector((req("app", Operator.EQUALS, "web"), req("tier", Operator.NOT_IN, "db"))),
            id="decoded-object",
        ),
    ],
)
def test_label_selector_as_selector_tells_nil_from_empty(
    selector: meta.LabelSelector | None, expected: LabelSelector | Nothing
) -> None:
    assert label_selector_as_selector(selector) == expected


# --- fields.ParseSelector (fields selector_test.go)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("", ""),
        ("x!=a,y=b", "x!=a,y=b"),
        ("x=a||y\\=b", "x=a||y\\=b"),
        ("x=a\\=\\=b", "x=a\\=\\=b"),
        ("x=a,a=x", "a=x,x=a"),
        ("a==b", "a=b"),
        ("a=b!c", "a=b!c"),  # "!" needs no escape in a value
        ("a!=b!c", "a!=b!c"),
        (",a=a,", "a=a"),
        ("a=", "a="),
        ("=", ""),  # empty field and value: the term is dropped, as upstream's Transform does
        ("!=", ""),
        ("k=\\,,k2=v2", "k2=v2,k=\\,"),  # raw terms sort before parsing: "2" < "="
        ("함=수,목=록", "목=록,함=수"),
        (
            "involvedObject.namespace=default,involvedObject.uid=abc,involvedObject.name=x",
            "involvedObject.name=x,involvedObject.namespace=default,involvedObject.uid=abc",
        ),
        (
            "spec.nodeName=n,status.phase!=Succeeded,status.phase!=Failed",
            "spec.nodeName=n,status.phase!=Failed,status.phase!=Succeeded",
        ),
        (
            "involvedObject.kind=Node,involvedObject.namespace=",
            "involvedObject.kind=Node,involvedObject.namespace=",
        ),
        ("metadata.name=x", "metadata.name=x"),
    ],
    ids=repr,
)
def test_parse_field_selector_round_trips_to_upstream_string(text: str, canonical: str) -> None:
    selector = parse_field_selector(text)
    assert str(selector) == canonical
    assert str(parse_field_selector(canonical)) == canonical


def test_parse_field_selector_builds_requirements() -> None:
    assert parse_field_selector("b==x,a!=y,c=\\=z").requirements == (
        FieldRequirement("a", Operator.NOT_EQUALS, "y"),
        FieldRequirement("b", Operator.EQUALS, "x"),  # "==" is stored as "=", as upstream
        FieldRequirement("c", Operator.EQUALS, "=z"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("x==a==b", "invalid field selector: unescaped character in value: 61"),
        ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
        ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
        ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
        ("x", "invalid selector: 'x'; can't understand 'x'"),
        ("k=\\a", "invalid field selector: invalid escape sequence: \\a"),
        ("k=\\!", "invalid field selector: invalid escape sequence: \\!"),
        ("k=\\", "invalid field selector: invalid escape sequence: \\"),
        ("k=\\\\\\", "invalid field selector: invalid escape sequence: \\"),
    ],
    ids=repr,
)
def test_parse_field_selector_rejects_with_upstream_message(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_field_selector(text)
    assert str(caught.value) == message


FIELDSET = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("foo=bar,baz=blah", FIELDSET, True),
        ("foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\", FIELDSET, True),
        ("foo=blah", FIELDSET, False),
        ("foo=bar,foobar=bar,baz=blah", FIELDSET, False),
        ("x=", {}, True),  # a missing field is "" (fields.Set.Get)
        ("x!=", {}, False),
        ("x!=a", {}, True),
        (
            "spec.nodeName=n,status.phase!=Succeeded,status.phase!=Failed",
            {"spec.nodeName": "n", "status.phase": "Running"},
            True,
        ),
        (
            "spec.nodeName=n,status.phase!=Succeeded,status.phase!=Failed",
            {"spec.nodeName": "n", "status.phase": "Failed"},
            False,
        ),
        (
            "involvedObject.namespace=default,involvedObject.uid=abc,involvedObject.name=x",
            {
                "involvedObject.namespace": "default",
                "involvedObject.uid": "abc",
                "involvedObject.name": "x",
            },
            True,
        ),
        (
            "involvedObject.namespace=default,involvedObject.uid=abc,involvedObject.name=x",
            {
                "involvedObject.namespace": "default",
                "involvedObject.uid": "",
                "involvedObject.name": "x",
            },
            False,
        ),
    ],
    ids=repr,
)
def test_field_selector_matches_like_upstream(
    text: str, fields: dict[str, str], expected: bool
) -> None:
    assert parse_field_selector(text).matches(fields) is expected


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("", "test", None),
        ("a=b", "test", None),
        ("test=b", "test", "b"),
        ("test=", "test", ""),
        ("test!=b", "test", None),
        ("a=x,test=b", "test", "b"),
        ("metadata.name=x", "metadata.name", "x"),
        ("test==b", "test", "b"),
    ],
    ids=repr,
)
def test_field_selector_value_for_reports_exact_match(
    text: str, field: str, value: str | None
) -> None:
    assert parse_field_selector(text).value_for(field) == value


def test_field_selector_empty_means_everything() -> None:
    assert parse_field_selector("").is_empty()
    assert FieldSelector().matches({"a": "b"})
    assert not parse_field_selector("a=b").is_empty()


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("", ""),
        ("a", "a"),
        ("=", "\\="),
        (",", "\\,"),
        ("\\", "\\\\"),
        ("\\=\\,\\", "\\\\\\=\\\\\\,\\\\"),
        ("!", "!"),
    ],
    ids=repr,
)
def test_escape_field_value_matches_upstream(raw: str, escaped: str) -> None:
    assert escape_field_value(raw) == escaped
    assert parse_field_selector(f"f={escaped}").value_for("f") == raw


def test_field_requirement_matches_on_its_own() -> None:
    assert FieldRequirement("status.phase", Operator.NOT_EQUALS, "Failed").matches({})
    assert FieldRequirement("status.phase", Operator.DOUBLE_EQUALS, "").matches({})
    assert not FieldRequirement("status.phase", Operator.EQUALS, "Failed").matches({})
    assert str(FieldRequirement("a", Operator.DOUBLE_EQUALS, "b,c")) == "a=b\\,c"


def test_field_requirement_refuses_set_operators() -> None:
    with pytest.raises(SelectorError, match="not supported"):
        FieldRequirement("a", Operator.IN, "b")


# --- properties ------------------------------------------------------------------------

KEYS = ["a", "b", "app", "x.io/k", "in", "notin"]
VALUES = ["", "a", "b", "in", "web", "0", "1", "007", "10"]
INTS = ["0", "1", "007", "10"]
LABEL_VALUES = [*VALUES, "-3", "+3", "99999999999999999999", "x1"]
blank = st.sampled_from(["", " ", "\t", "  ", "\n"])


@st.composite
def label_terms(draw: st.DrawFn) -> tuple[str, str, tuple[str, ...], str]:
    """A random (key, operator, values) with one of its valid spellings."""
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", ">", "<"]))
    s1, s2 = draw(blank), draw(blank)
    if op in ("=", "==", "!="):
        value = draw(st.sampled_from(VALUES))
        return key, op, (value,), f"{key}{s1}{op}{s2}{value}"
    if op in ("in", "notin"):
        values = tuple(draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=4)))
        return key, op, values, f"{key} {op}{s1}({s2}{(',' + s2).join(values)})"
    if op in (">", "<"):
        value = draw(st.sampled_from(INTS))
        return key, op, (value,), f"{key}{s1}{op}{s2}{value}"
    if op == "!":
        return key, op, (), f"!{s1}{key}"
    return key, op, (), key


def reference_match(terms: list[tuple[str, str, tuple[str, ...]]], labels: dict[str, str]) -> bool:
    """Requirement semantics straight from the upstream doc comment, no cleverness."""
    for key, op, values in terms:
        present = key in labels
        if op in ("=", "==", "in"):
            ok = present and labels[key] in values
        elif op in ("!=", "notin"):
            ok = not present or labels[key] not in values
        elif op == "exists":
            ok = present
        elif op == "!":
            ok = not present
        else:
            text = labels.get(key, "")
            if not present or re.fullmatch(r"[+-]?[0-9]+", text) is None:
                ok = False
            else:
                number, bound = int(text), int(values[0])
                in_range = -(2**63) <= number < 2**63
                ok = in_range and (number > bound if op == ">" else number < bound)
        if not ok:
            return False
    return True


@given(
    terms=st.lists(label_terms(), max_size=5),
    labels=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(LABEL_VALUES), max_size=4),
)
def test_label_selector_matching_agrees_with_reference(
    terms: list[tuple[str, str, tuple[str, ...], str]], labels: dict[str, str]
) -> None:
    selector = parse_label_selector(",".join(text for *_, text in terms))
    expected = reference_match([(k, op, v) for k, op, v, _ in terms], labels)
    assert selector.matches(labels) is expected


@given(terms=st.lists(label_terms(), max_size=5))
def test_label_selector_string_parses_back_to_equal_selector(
    terms: list[tuple[str, str, tuple[str, ...], str]],
) -> None:
    selector = parse_label_selector(",".join(text for *_, text in terms))
    assert parse_label_selector(str(selector)) == selector


@given(
    text=st.text(alphabet="ab1 =!(),<>\t", max_size=20) | st.sampled_from(["in (a)", "a in (in)"])
)
def test_any_accepted_label_text_round_trips(text: str) -> None:
    try:
        selector = parse_label_selector(text)
    except SelectorError:
        return
    assert parse_label_selector(str(selector)) == selector


FIELDS = ["a", "b", "spec.nodeName", "status.phase"]
FIELD_VALUES = ["", "x", "Running", "a,b", "a=b", "\\", "!", "x\\,="]


@st.composite
def field_terms(draw: st.DrawFn) -> tuple[str, str, str, str]:
    field = draw(st.sampled_from(FIELDS))
    op = draw(st.sampled_from(["=", "==", "!="]))
    value = draw(st.sampled_from(FIELD_VALUES))
    escaped = re.sub(r"([\\,=])", r"\\\1", value)
    return field, op, value, f"{field}{op}{escaped}"


@given(
    terms=st.lists(field_terms(), max_size=5),
    fields=st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(FIELD_VALUES), max_size=4),
)
def test_field_selector_matching_agrees_with_reference(
    terms: list[tuple[str, str, str, str]], fields: dict[str, str]
) -> None:
    selector = parse_field_selector(",".join(text for *_, text in terms))
    expected = all(
        (fields.get(field, "") == value) is (op != "!=") for field, op, value, _ in terms
    )
    assert selector.matches(fields) is expected


@given(terms=st.lists(field_terms(), max_size=5))
def test_field_selector_string_parses_back_to_same_terms(
    terms: list[tuple[str, str, str, str]],
) -> None:
    selector = parse_field_selector(",".join(text for *_, text in terms))
    again = parse_field_selector(str(selector))

    def key(r: FieldRequirement) -> tuple[str, str, str]:
        return (r.field, r.operator, r.value)

    # Raw-text sorting can reorder terms once "==" is rewritten as "=", so compare as sets.
    assert sorted(again.requirements, key=key) == sorted(selector.requirements, key=key)
    assert str(parse_field_selector(str(again))) == str(again)


# --- speed -----------------------------------------------------------------------------


@pytest.mark.slow
def test_common_label_selector_matches_in_about_a_microsecond() -> None:
    selector = parse_label_selector("app=web")
    labels = {"app": "web", "pod-template-hash": "5d4f8", "tier": "frontend"}
    runs = 200_000
    seconds = min(timeit.repeat(lambda: selector.matches(labels), number=runs, repeat=3))
    assert seconds / runs < 1e-6
