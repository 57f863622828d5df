"""cel-go's ``ext.Sets`` library, which Kubernetes v1.32 adds to every CEL environment.

Mirrors ``github.com/google/cel-go/ext/sets.go`` (added by
``k8s.io/apiserver/pkg/cel/environment/base.go`` at 1.29): ``sets.contains(list, list)``
(every element of the second is in the first; true for an empty second list),
``sets.equivalent(list, list)`` (each contains the other, duplicates ignored) and
``sets.intersects(list, list)`` (some element in both). Membership is CEL equality
(``cel_equal``): numbers compare across int, uint and double, ``true`` is not ``1``.
Also the list forms of ``indexOf``/``lastIndexOf`` from Kubernetes' ``lists.go``, which
need the same equality. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cel_expr_python import cel


def cel_equal(left: Any, right: Any) -> bool:
    """CEL's ``==`` on plain values (lists and maps element-wise, numbers by value)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, Sequence) and not isinstance(left, str | bytes):
        if not isinstance(right, Sequence) or isinstance(right, str | bytes):
            return False
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, Mapping):
        if not isinstance(right, Mapping) or len(left) != len(right):
            return False
        return all(key in right and cel_equal(value, right[key]) for key, value in left.items())
    return type(left) is type(right) and bool(left == right)


def _member_of(item: Any, items: Sequence[Any]) -> bool:
    return any(cel_equal(item, candidate) for candidate in items)


def _contains(items: Sequence[Any], wanted: Sequence[Any]) -> bool:
    return all(_member_of(item, items) for item in wanted)


def _equivalent(left: Sequence[Any], right: Sequence[Any]) -> bool:
    return _contains(left, right) and _contains(right, left)


def _intersects(left: Sequence[Any], right: Sequence[Any]) -> bool:
    return any(_member_of(item, left) for item in right)


def _index_of(items: Sequence[Any], wanted: Any) -> int:
    return next((i for i, item in enumerate(items) if cel_equal(item, wanted)), -1)


def _last_index_of(items: Sequence[Any], wanted: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if cel_equal(items[i], wanted):
            return i
    return -1


def declarations() -> list[Any]:
    """The sets functions and the list ``indexOf``/``lastIndexOf`` overloads."""
    dyn_list = cel.Type.List(cel.Type.DYN)
    boolean, integer = cel.Type.BOOL, cel.Type.INT
    sets = [
        ("sets.contains", "list_sets_contains_list", _contains),
        ("sets.equivalent", "list_sets_equivalent_list", _equivalent),
        ("sets.intersects", "list_sets_intersects_list", _intersects),
    ]
    declared = [
        cel.FunctionDecl(name, [cel.Overload(overload, boolean, [dyn_list, dyn_list], impl=impl)])
        for name, overload, impl in sets
    ]
    for name, overload, impl in (
        ("indexOf", "list_a_index_of_int", _index_of),
        ("lastIndexOf", "list_a_last_index_of_int", _last_index_of),
    ):
        declared.append(
            cel.FunctionDecl(
                name,
                [
                    cel.Overload(
                        overload, integer, [dyn_list, cel.Type.DYN], is_member=True, impl=impl
                    )
                ],
            )
        )
    return declared
