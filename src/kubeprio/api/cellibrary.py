"""Kubernetes' CEL list and regex libraries, for ``api.celexpr``.

Mirrors ``k8s.io/apiserver/pkg/cel/library/lists.go`` (``isSorted``, ``sum``, ``min``,
``max`` on lists) and ``regex.go`` (``find``, ``findAll`` on strings, with an optional
limit), which kube-apiserver adds to every admission policy environment. The list forms
of ``indexOf`` and ``lastIndexOf`` share names with the strings extension's functions,
so they are declared in ``api.celsets`` (an extension may add overloads; plain
declarations may not). Python's ``re`` stands in for RE2 (the patterns policies
use are the common subset). Errors are raised as ``ValueError`` with cel-go's text; the
runtime reports them as the expression's error. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from cel_expr_python import cel


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: Sequence[Any]) -> Any:
    return sum(items) if items else 0


def _min(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _max(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


def _find(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str) -> list[str]:
    return [found.group(0) for found in re.finditer(pattern, text)]


def _find_all_limit(text: str, pattern: str, limit: int) -> list[str]:
    found = _find_all(text, pattern)
    return found if limit < 0 else found[:limit]


def _member(
    name: str, overload: str, result: Any, params: Sequence[Any], impl: Callable[..., Any]
) -> Any:
    return cel.FunctionDecl(
        name, [cel.Overload(overload, result, list(params), is_member=True, impl=impl)]
    )


def declarations() -> list[Any]:
    """The function declarations (with implementations) to add to an environment."""
    dyn_list = cel.Type.List(cel.Type.DYN)
    string = cel.Type.STRING
    return [
        _member("isSorted", "list_is_sorted", cel.Type.BOOL, [dyn_list], _is_sorted),
        _member("sum", "list_sum", cel.Type.DYN, [dyn_list], _sum),
        _member("min", "list_min", cel.Type.DYN, [dyn_list], _min),
        _member("max", "list_max", cel.Type.DYN, [dyn_list], _max),
        _member("find", "string_find", string, [string, string], _find),
        cel.FunctionDecl(
            "findAll",
            [
                cel.Overload(
                    "string_find_all",
                    cel.Type.List(string),
                    [string, string],
                    is_member=True,
                    impl=_find_all,
                ),
                cel.Overload(
                    "string_find_all_n",
                    cel.Type.List(string),
                    [string, string, cel.Type.INT],
                    is_member=True,
                    impl=_find_all_limit,
                ),
            ],
        ),
    ]
