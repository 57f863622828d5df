"""Rewrites of a checked CEL expression, for functions whose results Python cannot build.

What it is: a function implemented in Python cannot return a CEL ``optional`` (the
binding converts only plain values and messages), yet upstream's ``format`` library
returns one from ``format.named(name)`` and ``<Format>.validate(text)``. The checker
still declares them with upstream's types (so a policy type-checks as upstream's); before
the expression runs, each call the checker resolved to such an overload is rewritten
into ``optional.ofNonZeroValue(<helper call>)``, where the helper is a plain Python
function returning a message or a list, whose zero value (empty message, empty list)
is ``optional.none()``.

The checked expression is ``cel.expr.CheckedExpr`` (cel-spec's ``checked.proto``,
``syntax.proto``) packed in an ``Any``. Only the parts a rewrite walks are declared here
(expressions, calls, references); everything else (constants, types, source positions)
is kept byte for byte as unknown fields.

Who uses it: ``api.celenv.Environment.compile`` with the rewrites of ``api.celformat``.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, Final

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

_FIELD: Final = descriptor_pb2.FieldDescriptorProto
_PACKAGE: Final = "cel.expr"
CHECKED_EXPR_URL: Final = "type.googleapis.com/cel.expr.CheckedExpr"

# (message, [(field, number, type, label, type name)]): the subset of cel-spec's protos.
_MESSAGES: Final[tuple[tuple[str, tuple[tuple[str, int, int, int, str], ...]], ...]] = (
    (
        "Expr",
        (
            ("id", 2, _FIELD.TYPE_INT64, _FIELD.LABEL_OPTIONAL, ""),
            ("select_expr", 5, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Select"),
            ("call_expr", 6, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Call"),
            ("list_expr", 7, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.CreateList"),
            (
                "struct_expr",
                8,
                _FIELD.TYPE_MESSAGE,
                _FIELD.LABEL_OPTIONAL,
                ".cel.expr.CreateStruct",
            ),
            (
                "comprehension_expr",
                9,
                _FIELD.TYPE_MESSAGE,
                _FIELD.LABEL_OPTIONAL,
                ".cel.expr.Comprehension",
            ),
        ),
    ),
    ("Select", (("operand", 1, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr"),)),
    (
        "Call",
        (
            ("target", 1, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr"),
            ("function", 2, _FIELD.TYPE_STRING, _FIELD.LABEL_OPTIONAL, ""),
            ("args", 3, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_REPEATED, ".cel.expr.Expr"),
        ),
    ),
    (
        "CreateList",
        (("elements", 1, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_REPEATED, ".cel.expr.Expr"),),
    ),
    (
        "CreateStruct",
        (("entries", 2, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_REPEATED, ".cel.expr.Entry"),),
    ),
    (
        "Entry",
        (
            ("map_key", 3, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr"),
            ("value", 4, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr"),
        ),
    ),
    (
        "Comprehension",
        tuple(
            (name, number, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr")
            for name, number in (
                ("iter_range", 2),
                ("accu_init", 4),
                ("loop_condition", 5),
                ("loop_step", 6),
                ("result", 7),
            )
        ),
    ),
    (
        "Reference",
        (
            ("name", 1, _FIELD.TYPE_STRING, _FIELD.LABEL_OPTIONAL, ""),
            ("overload_id", 3, _FIELD.TYPE_STRING, _FIELD.LABEL_REPEATED, ""),
        ),
    ),
    (
        "CheckedExpr",
        (
            (
                "reference_map",
                2,
                _FIELD.TYPE_MESSAGE,
                _FIELD.LABEL_REPEATED,
                ".cel.expr.CheckedExpr.ReferenceMapEntry",
            ),
            ("expr", 4, _FIELD.TYPE_MESSAGE, _FIELD.LABEL_OPTIONAL, ".cel.expr.Expr"),
        ),
    ),
)


def _file() -> descriptor_pb2.FileDescriptorProto:
    described = descriptor_pb2.FileDescriptorProto(
        name="kubeprio/cel/checked_subset.proto", package=_PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES:
        message = described.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = message.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
        if name == "CheckedExpr":
            entry = message.nested_type.add(name="ReferenceMapEntry")
            entry.options.map_entry = True
            entry.field.add(
                name="key", number=1, type=_FIELD.TYPE_INT64, label=_FIELD.LABEL_OPTIONAL
            )
            entry.field.add(
                name="value",
                number=2,
                type=_FIELD.TYPE_MESSAGE,
                label=_FIELD.LABEL_OPTIONAL,
                type_name=".cel.expr.Reference",
            )
    return described


def _classes() -> tuple[Any, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    checked = message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr"))
    expr = message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.Expr"))
    return checked, expr


_CHECKED_CLASS, _EXPR_CLASS = _classes()


@dataclasses.dataclass(frozen=True, slots=True)
class OptionalResult:
    """Calls resolved to ``overload_id`` become ``optional.ofNonZeroValue(helper(...))``:
    the helper is a global function taking the call's receiver (if any) then its
    arguments."""

    overload_id: str
    helper: str
    helper_overload_id: str
    member: bool


OF_NON_ZERO_VALUE: Final = "optional.ofNonZeroValue"
_OF_NON_ZERO_VALUE_ID: Final = "optional_ofNonZeroValue"


def _children(expr: Any) -> Iterator[Any]:
    if expr.HasField("select_expr"):
        yield expr.select_expr.operand
    if expr.HasField("call_expr"):
        call = expr.call_expr
        if call.HasField("target"):
            yield call.target
        yield from call.args
    if expr.HasField("list_expr"):
        yield from expr.list_expr.elements
    if expr.HasField("struct_expr"):
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield entry.map_key
            yield entry.value
    if expr.HasField("comprehension_expr"):
        loop = expr.comprehension_expr
        yield from (
            loop.iter_range,
            loop.accu_init,
            loop.loop_condition,
            loop.loop_step,
            loop.result,
        )


def _walk(expr: Any) -> Iterator[Any]:
    yield expr
    for child in _children(expr):
        yield from _walk(child)


def rewrite(serialized: bytes, rewrites: Mapping[str, OptionalResult]) -> bytes:
    """``serialized`` (an ``Any`` holding a ``CheckedExpr``) with every call to one of
    the ``rewrites``' overloads replaced; unchanged bytes when there is none."""
    packed = any_pb2.Any.FromString(serialized)
    if packed.type_url != CHECKED_EXPR_URL:
        return serialized
    checked = _CHECKED_CLASS.FromString(packed.value)
    references = checked.reference_map
    found: list[tuple[Any, OptionalResult]] = []
    for expr in _walk(checked.expr):
        reference = references.get(expr.id) if expr.id in references else None
        if reference is None or not expr.HasField("call_expr"):
            continue
        for overload_id in reference.overload_id:
            if overload_id in rewrites:
                found.append((expr, rewrites[overload_id]))
                break
    if not found:
        return serialized
    next_id = max(expr.id for expr in _walk(checked.expr)) + 1
    # Innermost first: rewriting a call moves (copies) its receiver into the helper, so
    # calls nested in that receiver must already be rewritten.
    for expr, rule in reversed(found):
        call = expr.call_expr
        helper = _EXPR_CLASS(id=next_id)
        helper.call_expr.function = rule.helper
        # A namespaced global (``format.named(x)``) may still carry its namespace as
        # the target; a member call's target is the receiver, the helper's first argument.
        receiver = [call.target] if call.HasField("target") and rule.member else []
        helper.call_expr.args.extend([*receiver, *call.args])
        references[next_id].overload_id.append(rule.helper_overload_id)
        references[next_id].name = rule.helper
        next_id += 1
        call.ClearField("target")
        call.function = OF_NON_ZERO_VALUE
        del call.args[:]
        call.args.append(helper)
        reference = references[expr.id]
        reference.name = OF_NON_ZERO_VALUE
        del reference.overload_id[:]
        reference.overload_id.append(_OF_NON_ZERO_VALUE_ID)
    packed.value = checked.SerializeToString()
    return bytes(packed.SerializeToString())
