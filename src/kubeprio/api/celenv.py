"""A CEL environment in two halves: one that type-checks, one that runs.

What it is: the C++ runtime under ``cel-expr-python`` registers a function's overloads by
the *kind* of each argument, and every protocol-buffer message is one kind. So two
overloads that differ only in which message they take (upstream's ``string(ip)`` and
``string(cidr)``, ``PathCheck.check`` and ``ResourceCheck.check``) cannot both be
registered at run time (``CelFunction with specified parameters already registered``),
though the type checker tells them apart perfectly well. The checker and the runtime of
one ``cel.Env`` are built separately and lazily (the runtime on the first evaluation),
and a checked expression can be carried from one environment to another
(``serialize`` / ``deserialize``). So:

* the *checking* environment declares every overload (``SharedFunction.checked``), and
  its runtime is never built;
* the *running* environment declares one overload per runtime signature
  (``SharedFunction.running``) whose implementation looks at the message's type name
  and calls the variant the checker chose (``no such overload`` for any other message,
  as cel-go answers a ``dyn`` argument of the wrong type);
* ``Environment.compile`` checks in the first and deserializes into the second, after
  the rewrites of ``api.celcheckedast`` (calls that must return an ``optional``).

An overload without implementation (``impl=None``) is bound per evaluation
(``cel.Function`` in ``Expression.eval(functions=...)``: the ``authorizer`` library's
``check``); a shared one is then bound once for all its variants.

Who uses it: ``api.celexpr.new_environment``. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from kubeprio.api import celcheckedast, celtypes

NO_SUCH_OVERLOAD = "no such overload"


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """One overload of a ``SharedFunction``: the checker's declaration and, where the
    runtime calls it directly, its implementation."""

    overload_id: str
    result: Any
    params: tuple[Any, ...]
    impl: Callable[..., Any] | None = None


def _message_names(params: Sequence[Any]) -> tuple[str | None, ...]:
    return tuple(param.name() if param.is_message() else None for param in params)


def dispatcher(variants: Sequence[Variant]) -> Callable[..., Any]:
    """One implementation for ``variants``: the one whose message parameters are the
    types of the arguments' messages."""
    table = [(_message_names(variant.params), variant.impl) for variant in variants]

    def dispatch(*args: Any) -> Any:
        for names, impl in table:
            if impl is not None and all(
                name is None or _type_name(arg) == name
                for name, arg in zip(names, args, strict=True)
            ):
                return impl(*args)
        raise ValueError(NO_SUCH_OVERLOAD)

    return dispatch


def _type_name(value: Any) -> str | None:
    descriptor = getattr(value, "DESCRIPTOR", None)
    return None if descriptor is None else str(descriptor.full_name)


@dataclasses.dataclass(frozen=True, slots=True)
class SharedFunction:
    """Overloads of one function that the runtime cannot tell apart (they differ only in
    which message an argument is)."""

    name: str
    is_member: bool
    variants: tuple[Variant, ...]

    def checked(self) -> Any:
        """Every overload, for the checking environment."""
        return cel.FunctionDecl(
            self.name,
            [
                cel.Overload(
                    variant.overload_id,
                    variant.result,
                    list(variant.params),
                    is_member=self.is_member,
                    impl=variant.impl,
                )
                for variant in self.variants
            ],
        )

    def running(self) -> Any:
        """One overload for the running environment: a dispatcher, or an overload bound
        per evaluation when the variants have no implementation."""
        first = self.variants[0]
        lazy = all(variant.impl is None for variant in self.variants)
        results = {variant.result.name() for variant in self.variants}
        result = first.result if len(results) == 1 else cel.Type.DYN
        return cel.FunctionDecl(
            self.name,
            [
                cel.Overload(
                    first.overload_id,
                    result,
                    list(first.params),
                    is_member=self.is_member,
                    impl=None if lazy else dispatcher(self.variants),
                )
            ],
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Library:
    """The functions one environment adds to CEL's standard ones."""

    name: str
    declarations: tuple[Any, ...]
    shared: tuple[SharedFunction, ...]
    plain: tuple[Any, ...]
    """Declarations of names no other library declares (``NewEnv(functions=...)``)."""
    rewrites: tuple[celcheckedast.OptionalResult, ...] = ()
    """Optional-returning overloads and the helpers they run as (``api.celcheckedast``)."""


def _new_env(variables: Mapping[str, Any], library: Library, shared: Sequence[Any]) -> Any:
    return cel.NewEnv(
        descriptor_pool=celtypes.POOL,
        variables=dict(variables),
        extensions=[
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
            ext_math.ExtMath(),
            ext_bindings.ExtBindings(),
            ext_encoders.ExtEncoders(),
            cel.CelExtension(library.name, [*library.declarations, *shared]),
        ],
        functions=list(library.plain),
    )


class Environment:
    """A checking and a running ``cel.Env`` with the same variables and library."""

    def __init__(self, variables: Mapping[str, Any], library: Library) -> None:
        self._checking = _new_env(variables, library, [s.checked() for s in library.shared])
        self._running = _new_env(variables, library, [s.running() for s in library.shared])
        self._rewrites = {rule.overload_id: rule for rule in library.rewrites}

    def compile(self, text: str) -> Any:
        """``text`` type-checked, as an expression of the running environment;
        ``RuntimeError`` with the checker's issues when it does not compile."""
        checked = self._checking.compile(text).serialize()
        return self._running.deserialize(celcheckedast.rewrite(checked, self._rewrites))
