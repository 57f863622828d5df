"""CEL expressions as kube-apiserver compiles and runs them for admission policies.

What it is: a thin, typed layer over ``cel-expr-python`` (Google's CEL C++ runtime, with
its type checker and ANTLR parser, so compile errors read as cel-go's do: ``ERROR:
<input>:1:4: Syntax error: ...`` followed by the `` | `` source and caret lines). It
builds the environments of upstream's ``k8s.io/apiserver/pkg/admission/plugin/cel``
compiler (``object``, ``oldObject``, ``request``, ``namespaceObject``, ``variables``,
and ``params`` only when the policy has a ``paramKind``), checks the result type of each
expression (``compile.go``: ``must evaluate to bool``), and turns run-time errors into
cel-go's texts where they differ (``no such key: x``, ``division by zero``).

The library: CEL's standard functions and macros, the ``strings`` extension
(``lowerAscii``, ``split``, ``join``, ``format``...), ``optional`` types, ``math``,
``cel.bind`` and ``base64``, plus Kubernetes' list (``isSorted``, ``sum``, ``min``,
``max``, ``indexOf``, ``lastIndexOf``) and regex (``find``, ``findAll``) libraries
(``api.cellibrary``), and the quantity, URL, IP, CIDR and sets libraries
(``api.celextension``; their opaque values are ``api.celtypes`` messages, so the
environment carries that descriptor pool), the ``format`` library (``api.celformat``)
and, for admission policies only, the ``authorizer`` library with the variables
``authorizer`` and ``authorizer.requestResource`` (``api.celauthz``). The environment
is an ``api.celenv.Environment`` (a checking and a running half). Every other
variable is ``dyn`` (upstream types ``object`` from the OpenAPI schema
only for the status ``typeChecking`` warnings, as a separate step).

Who uses it: ``api.validation.admissionpolicy`` (compile errors at the field path) and
``admission.validatingpolicy`` (evaluation). No I/O; compiled programs are cached.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celauthz, celenv, celextension, celoverloadtext

OBJECT: Final = "object"
OLD_OBJECT: Final = "oldObject"
REQUEST: Final = "request"
PARAMS: Final = "params"
NAMESPACE_OBJECT: Final = "namespaceObject"
VARIABLES: Final = "variables"


class ResultType(enum.Enum):
    """What an expression must evaluate to (upstream's ``ReturnTypes``)."""

    BOOL = "bool"
    STRING = "string"
    STRING_OR_NULL = "string_or_null"
    ANY = "any"


_ALLOWED: Final[dict[ResultType, tuple[Any, ...]]] = {
    ResultType.BOOL: (cel.Type.BOOL,),
    ResultType.STRING: (cel.Type.STRING,),
    ResultType.STRING_OR_NULL: (cel.Type.STRING, cel.Type.NULL),
}

_REASONS: Final = {
    ResultType.BOOL: "must evaluate to bool",
    ResultType.STRING: "must evaluate to string",
    # Go's %v of a []*cel.Type: each type's String(), space-separated in brackets.
    ResultType.STRING_OR_NULL: "must evaluate to one of [string null_type]",
}


class CompileError(Exception):
    """An expression that does not compile; ``detail`` is upstream's text."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclasses.dataclass(frozen=True, slots=True)
class Compiled:
    """A compiled, type-checked expression, ready to run."""

    text: str
    program: Any


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """The result of one evaluation: a plain Python value, or cel-go's error text."""

    value: object | None = None
    error: str | None = None


def new_environment(variables: Mapping[str, Any], *, authorizer: bool = False) -> Any:
    """An environment with Kubernetes' libraries and ``variables`` (name -> ``cel.Type``);
    other scopes than admission policies (CRD rules: ``api.crdcel``) build theirs here.
    ``authorizer`` adds the authorization library (its variables are the caller's)."""
    return celenv.Environment(variables, celextension.library(authorizer=authorizer))


@functools.cache
def _environment(with_params: bool) -> Any:
    declared = {name: cel.Type.DYN for name in (OBJECT, OLD_OBJECT, REQUEST, NAMESPACE_OBJECT)}
    declared[VARIABLES] = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
    declared[celauthz.AUTHORIZER] = celauthz.AUTHORIZER_TYPE
    declared[celauthz.REQUEST_RESOURCE] = celauthz.RESOURCE_CHECK_TYPE
    if with_params:
        declared[PARAMS] = cel.Type.DYN
    return new_environment(declared, authorizer=True)


_STATUS_PREFIX: Final = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX: Final = re.compile(r" \[[A-Z_]+\]$")


def _issues_text(message: str) -> str:
    """The library's compile error as cel-go's ``Issues.String()``: the status code
    (``INVALID_ARGUMENT: ``... `` [INVALID_ARGUMENT]``) removed."""
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", message, count=1))


_QUALIFIED_UNDECLARED: Final = re.compile(
    r"^ERROR: <input>:\d+:\d+: undeclared reference to '([_a-zA-Z][_a-zA-Z0-9]*)\.[^']*' "
    r"\(in container '(.*)'\)$"
)


def _report_at_identifier(text: str, issues: str) -> str:
    """cel-go reports an undeclared ``params.x`` at the identifier ``params``; the C++
    checker names the whole dotted path at its last dot. Rewrite such a lone issue."""
    lines = issues.split("\n")
    found = _QUALIFIED_UNDECLARED.match(lines[0])
    if found is None or len(lines) != 3:
        return issues
    name = found.group(1)
    at = re.search(rf"(?<![.\w]){re.escape(name)}\b", text)
    if at is None:
        return issues
    line_start = text.rfind("\n", 0, at.start()) + 1
    line_number = text.count("\n", 0, at.start()) + 1
    column = at.start() - line_start
    source_line = text[line_start:].split("\n", 1)[0]
    return (
        f"ERROR: <input>:{line_number}:{column + 1}: undeclared reference to '{name}' "
        f"(in container '{found.group(2)}')\n | {source_line}\n | {'.' * column}^"
    )


def compile_in(environment: Any, text: str, prefix: str = "compilation failed: ") -> Compiled:
    """Compile ``text`` in ``environment``; ``CompileError`` with ``prefix`` and cel-go's
    issues when it does not compile (no result type check)."""
    try:
        program = environment.compile(text)
    except RuntimeError as failure:
        issues = _report_at_identifier(text, _issues_text(str(failure)))
        issues = celoverloadtext.with_receivers(text, issues)
        raise CompileError(prefix + issues) from None
    return Compiled(text, program)


@functools.lru_cache(maxsize=4096)
def compile_expression(text: str, result: ResultType, *, with_params: bool) -> Compiled:
    """Compile ``text`` as upstream's ``CompileCELExpression``; ``CompileError`` with its
    text (``compilation failed: ...`` or ``must evaluate to bool``) when it fails."""
    compiled = compile_in(_environment(with_params), text)
    allowed = _ALLOWED.get(result)
    if allowed is not None and not any(compiled.program.return_type() == k for k in allowed):
        raise CompileError(_REASONS[result])
    return compiled


_KEY_NOT_FOUND: Final = re.compile(r'^Key not found in map : "(.*)"$')
_INDEX_ERROR: Final = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")
_RENAMED: Final = {
    "divide by zero": "division by zero",
    "modulus by zero": "modulus by zero",
}


def runtime_error_text(message: str) -> str:
    """A run-time error of the C++ runtime in cel-go's words, where they differ."""
    text = _STATUS_PREFIX.sub("", message, count=1)
    if found := _KEY_NOT_FOUND.match(text):
        return f"no such key: {found.group(1)}"
    if found := _INDEX_ERROR.match(text):
        return f"index '{found.group(1)}' out of range in list size '{found.group(2)}'"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    return _RENAMED.get(text, text)


def evaluate(
    compiled: Compiled, activation: Mapping[str, object], functions: Sequence[Any] = ()
) -> Outcome:
    """Run ``compiled`` on ``activation`` (JSON-like values: dicts, lists, str, int,
    float, bool, None, and the library's messages), with ``functions`` bound for this
    evaluation (``cel.Function``: the ``authorizer`` library's ``check``)."""
    try:
        value = compiled.program.eval(data=activation, functions=list(functions))
    except (RuntimeError, ValueError, TypeError) as failure:
        return Outcome(error=runtime_error_text(str(failure)))
    if value.type() == cel.Type.ERROR:
        return Outcome(error=runtime_error_text(str(value.value())))
    return Outcome(value=value.plain_value())
