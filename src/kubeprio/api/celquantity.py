"""Kubernetes' CEL quantity library: ``quantity()``, ``isQuantity()`` and their methods.

Mirrors v1.32's ``k8s.io/apiserver/pkg/cel/library/quantity.go``: ``quantity(string)``
parses as ``resource.ParseQuantity`` (here ``api.quantity.parse_quantity``, whose error
text becomes the expression's error), ``isQuantity(string)``, the global
``sign(quantity)`` (upstream declares it as a function, not a method), and the methods
``isGreaterThan``, ``isLessThan``, ``compareTo`` (``Cmp``), ``asApproximateFloat``,
``asInteger`` (``cannot convert value to integer`` outside int64 or with a fraction),
``isInteger``, and ``add``/``sub`` of a quantity or an int. v1.32 has no ``mul``/``div``.

Values are ``api.celtypes`` messages holding the exact nano-unit count, so equality is
upstream's value equality (``quantity("200M") == quantity("0.2G")``). Pure: no I/O.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celtypes
from kubeprio.api.quantity import Quantity, QuantityError, parse_quantity

_NANO: Final = 10**9
_INT64_MAX: Final = 2**63 - 1
_INT64_MIN: Final = -(2**63)


def _nanos(value: Any) -> int:
    return int(celtypes.carried(value))


def _to_quantity(text: str) -> Any:
    try:
        parsed = parse_quantity(text)
    except QuantityError as failure:
        raise ValueError(str(failure)) from None
    return celtypes.quantity_value(parsed.nanos)


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _as_int64(nanos: int) -> int | None:
    """Upstream ``AsInt64``: the whole value if it has no fraction and fits an int64."""
    whole, fraction = divmod(nanos, _NANO)
    if fraction or not _INT64_MIN <= whole <= _INT64_MAX:
        return None
    return whole


def _as_integer(value: Any) -> int:
    whole = _as_int64(_nanos(value))
    if whole is None:
        raise ValueError("cannot convert value to integer")
    return whole


def _is_integer(value: Any) -> bool:
    return _as_int64(_nanos(value)) is not None


def _as_float(value: Any) -> float:
    return float(Fraction(_nanos(value), _NANO))


def _sign(value: Any) -> int:
    return Quantity(_nanos(value)).sign()


def _compare(left: Any, right: Any) -> int:
    a, b = _nanos(left), _nanos(right)
    return (a > b) - (a < b)


def _add(left: Any, right: Any) -> Any:
    return celtypes.quantity_value(_nanos(left) + _nanos(right))


def _add_int(left: Any, right: int) -> Any:
    return celtypes.quantity_value(_nanos(left) + right * _NANO)


def _sub(left: Any, right: Any) -> Any:
    return celtypes.quantity_value(_nanos(left) - _nanos(right))


def _sub_int(left: Any, right: int) -> Any:
    return celtypes.quantity_value(_nanos(left) - right * _NANO)


def _overload(
    overload: str, result: Any, params: list[Any], impl: Any, *, member: bool = True
) -> Any:
    return cel.Overload(overload, result, params, is_member=member, impl=impl)


def declarations() -> list[Any]:
    """The library's function declarations, with their implementations."""
    q, string = celtypes.QUANTITY, cel.Type.STRING
    boolean, integer = cel.Type.BOOL, cel.Type.INT
    table: list[tuple[str, list[Any]]] = [
        ("quantity", [_overload("string_to_quantity", q, [string], _to_quantity, member=False)]),
        (
            "isQuantity",
            [_overload("is_quantity_string", boolean, [string], _is_quantity, member=False)],
        ),
        ("sign", [_overload("quantity_sign", integer, [q], _sign, member=False)]),
        (
            "isGreaterThan",
            [
                _overload(
                    "quantity_is_greater_than", boolean, [q, q], lambda a, b: _compare(a, b) == 1
                )
            ],
        ),
        (
            "isLessThan",
            [
                _overload(
                    "quantity_is_less_than", boolean, [q, q], lambda a, b: _compare(a, b) == -1
                )
            ],
        ),
        ("compareTo", [_overload("quantity_compare_to", integer, [q, q], _compare)]),
        ("asApproximateFloat", [_overload("quantity_get_float", cel.Type.DOUBLE, [q], _as_float)]),
        ("asInteger", [_overload("quantity_get_int", integer, [q], _as_integer)]),
        ("isInteger", [_overload("quantity_is_integer", boolean, [q], _is_integer)]),
        (
            "add",
            [
                _overload("quantity_add", q, [q, q], _add),
                _overload("quantity_add_int", q, [q, integer], _add_int),
            ],
        ),
        (
            "sub",
            [
                _overload("quantity_sub", q, [q, q], _sub),
                _overload("quantity_sub_int", q, [q, integer], _sub_int),
            ],
        ),
    ]
    return [cel.FunctionDecl(name, overloads) for name, overloads in table]
