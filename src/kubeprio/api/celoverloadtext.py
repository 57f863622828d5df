"""cel-go's wording of a member call that matches no overload.

What it is: both checkers refuse ``'abc'.startsWith(1)`` with ``found no matching
overload for 'startsWith' applied to ...``, but they print the argument types
differently. The C++ checker lists them all, ``'(string, int)'``; cel-go
(``checker/errors.go`` ``noMatchingOverload`` with ``formatFunctionDeclType``) puts a
member call's receiver first, then a dot: ``'string.(int)'``. The issue itself does not
say whether the call was a member call, so the source line does: the function's name
right after a ``.`` and right before the caret's ``(`` (a namespaced global such as
``format.named`` has the dot inside its name and is left alone).

Who uses it: ``api.celexpr.compile_in``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

_NO_MATCH: Final = re.compile(
    r"^(ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']*)' applied to )"
    r"'\((.*)\)'$"
)


def _split_types(listed: str) -> list[str]:
    """``string, map(string, int)`` -> ``["string", "map(string, int)"]``."""
    parts: list[str] = []
    depth, start = 0, 0
    for at, char in enumerate(listed):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(listed[start:at].strip())
            start = at + 1
    parts.append(listed[start:].strip())
    return parts


def _is_member_call(source: str, line: int, column: int, name: str) -> bool:
    lines = source.split("\n")
    if "." in name or not 0 < line <= len(lines):
        return False
    before = lines[line - 1][: column - 1].rstrip()
    return before.endswith("." + name)


def with_receivers(source: str, issues: str) -> str:
    """``issues`` with each member call's signature in cel-go's form."""
    lines = issues.split("\n")
    for index, issue in enumerate(lines):
        found = _NO_MATCH.match(issue)
        if found is None:
            continue
        prefix, line, column, name, listed = found.groups()
        if not _is_member_call(source, int(line), int(column), name):
            continue
        receiver, *args = _split_types(listed)
        lines[index] = f"{prefix}'{receiver}.({', '.join(args)})'"
    return "\n".join(lines)
