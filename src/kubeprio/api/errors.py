"""API errors as Kubernetes ``Status`` objects, with upstream's codes, reasons and texts.

Mirrors ``k8s.io/apimachinery/pkg/api/errors`` (the ``New*`` constructors and their
message formats) and ``pkg/util/validation/field`` (field errors and how an aggregate
of them prints). Every ``StatusError`` carries the ``meta.Status`` body that the HTTP
layer renders and that ``client.http`` parses back into the same class::

    StatusError (kubeprio.errors.KubeprioError)
    ├── BadRequestError 400          ├── GoneError 410 (Expired)
    ├── UnauthorizedError 401        ├── UnsupportedMediaTypeError 415
    ├── ForbiddenError 403           ├── InvalidError 422 (one cause per field error)
    ├── NotFoundError 404            ├── TooManyRequestsError 429
    ├── MethodNotAllowedError 405    └── InternalError 500
    ├── AlreadyExistsError 409
    └── ConflictError 409

Pure: no I/O.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from kubeprio.api.gosyntax import GoAddressError, GoTyped, go_syntax, string_map, string_slice
from kubeprio.api.gotext import go_quote
from kubeprio.api.meta import Status, StatusCause, StatusDetails
from kubeprio.errors import KubeprioError

# --- field errors (pkg/util/validation/field/errors.go) ------------------------------------------


class ErrorType(enum.Enum):
    """A field error type: (cause reason on the wire, text in messages)."""

    NOT_FOUND = ("FieldValueNotFound", "Not found")
    REQUIRED = ("FieldValueRequired", "Required value")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    INVALID = ("FieldValueInvalid", "Invalid value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    TOO_MANY = ("FieldValueTooMany", "Too many")
    INTERNAL = ("InternalError", "Internal error")
    TYPE_INVALID = ("FieldValueTypeInvalid", "Invalid value")

    @property
    def reason(self) -> str:
        """The ``StatusCause.reason`` string."""
        return self.value[0]

    @property
    def text(self) -> str:
        """How the type reads in a message."""
        return self.value[1]


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Final = _Omit()
"""A bad value that is not shown in the message (upstream ``omitValue``)."""

_VALUE_LESS_TYPES: Final = frozenset(
    {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}
)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure at a field path (``spec.containers[0].name``)."""

    type: ErrorType
    field: str
    bad_value: object | None = OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field path (upstream ``ErrorBody``)."""
        if self.type in _VALUE_LESS_TYPES or self.bad_value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


class GoValue:
    """A bad value already rendered as upstream prints it (for values we cannot rebuild exactly)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"GoValue({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def format_value(value: object) -> str:
    """Print a bad value as Kubernetes v1.32's ``field.Error.ErrorBody`` does.

    ``None`` (nil) is ``null``, a string ``%q``-quoted, numbers and booleans plain, and
    anything else Go's ``%#v``: a typed value from :mod:`kubeprio.api.gosyntax` (or a
    :class:`GoValue` already rendered) prints exactly; an untyped mapping or sequence of
    strings is taken as ``map[string]string`` / ``[]string``. Any other untyped value
    (its Go type unknown here) falls back to its ``json.Marshal`` form.
    """
    if value is None:
        return "null"
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, GoTyped):
        return go_syntax(value)
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return go_syntax(string_map(value))
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return go_syntax(string_slice(value))
    if isinstance(value, Mapping | list | tuple):
        return go_json(value)
    return str(value)


def go_value(value: GoTyped, json_form: object) -> GoValue:
    """``value`` as ``%#v`` prints it, or ``json_form`` ``json.Marshal``-ed (fields in the
    order given) when ``value`` holds a non-nil nested pointer, whose address ``%#v``
    would print."""
    try:
        return GoValue(go_syntax(value))
    except GoAddressError:
        return GoValue(go_json(json_form, sort_keys=False))


def go_json(value: object, *, sort_keys: bool = True) -> str:
    """Render a JSON value as Go's ``json.Marshal`` does: compact, HTML-safe.

    Go sorts map keys; a struct keeps its declaration order, so pass an ordered dict
    with ``sort_keys=False`` to render one.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    for raw, escaped in _GO_JSON_ESCAPES:
        text = text.replace(raw, escaped)
    return text


_GO_JSON_ESCAPES: Final = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def required(field: str, detail: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError(ErrorType.REQUIRED, field, OMIT, detail)


def invalid(field: str, value: object, detail: str) -> FieldError:
    """``field.Invalid``."""
    return FieldError(ErrorType.INVALID, field, value, detail)


def forbidden(field: str, detail: str) -> FieldError:
    """``field.Forbidden``."""
    return FieldError(ErrorType.FORBIDDEN, field, OMIT, detail)


def not_supported(field: str, value: object, supported: Iterable[str]) -> FieldError:
    """``field.NotSupported``: lists the supported values, quoted."""
    options = ", ".join(go_quote(option) for option in supported)
    detail = f"supported values: {options}" if options else ""
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def value_not_found(field: str, value: object) -> FieldError:
    """``field.NotFound``: a reference to something that does not exist."""
    return FieldError(ErrorType.NOT_FOUND, field, value, "")


def duplicate(field: str, value: object) -> FieldError:
    """``field.Duplicate``."""
    return FieldError(ErrorType.DUPLICATE, field, value, "")


def too_long(field: str, max_length: int) -> FieldError:
    """``field.TooLong``."""
    return FieldError(ErrorType.TOO_LONG, field, OMIT, f"may not be more than {max_length} bytes")


def aggregate_message(errors: Sequence[FieldError]) -> str:
    """Join field errors as upstream's ``utilerrors.NewAggregate(...).Error()``."""
    return aggregate_text([str(error) for error in errors])


def aggregate_text(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()`` of errors with these messages: one bare,
    several in brackets, comma-joined, each distinct message once."""
    distinct = list(dict.fromkeys(messages))
    if len(distinct) == 1:
        return distinct[0]
    return "[" + ", ".join(distinct) + "]"


# --- status errors (apimachinery/pkg/api/errors/errors.go) ---------------------------------------


class StatusError(KubeprioError):
    """An API failure, carrying the ``Status`` body a client receives."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(self, status: Status) -> None:
        super().__init__(status.message or self.reason)
        self.status = status
        self.warnings: tuple[str, ...] = ()
        """Admission warnings to send with the error (a webhook's, on a refused write)."""

    @property
    def message(self) -> str:
        """The Status message."""
        return self.status.message or ""

    @classmethod
    def build(
        cls,
        message: str,
        *,
        details: StatusDetails | None = None,
        reason: str | None = None,
        code: int | None = None,
    ) -> StatusError:
        """Build an error of this class with a Failure Status body."""
        return cls(
            Status(
                status="Failure",
                message=message,
                reason=reason or cls.reason,
                details=details,
                code=code or cls.code,
            )
        )


class BadRequestError(StatusError):
    """400 BadRequest."""

    code = 400
    reason = "BadRequest"


class UnauthorizedError(StatusError):
    """401 Unauthorized."""

    code = 401
    reason = "Unauthorized"


class ForbiddenError(StatusError):
    """403 Forbidden."""

    code = 403
    reason = "Forbidden"


class NotFoundError(StatusError):
    """404 NotFound."""

    code = 404
    reason = "NotFound"


class MethodNotAllowedError(StatusError):
    """405 MethodNotAllowed."""

    code = 405
    reason = "MethodNotAllowed"


class AlreadyExistsError(StatusError):
    """409 AlreadyExists."""

    code = 409
    reason = "AlreadyExists"


class ConflictError(StatusError):
    """409 Conflict."""

    code = 409
    reason = "Conflict"


class GoneError(StatusError):
    """410 Expired/Gone: a watch asked for a compacted revision."""

    code = 410
    reason = "Expired"


class UnsupportedMediaTypeError(StatusError):
    """415 UnsupportedMediaType."""

    code = 415
    reason = "UnsupportedMediaType"


class InvalidError(StatusError):
    """422 Invalid: every field error is a cause."""

    code = 422
    reason = "Invalid"


class TooManyRequestsError(StatusError):
    """429 TooManyRequests (e.g. an eviction blocked by a PodDisruptionBudget)."""

    code = 429
    reason = "TooManyRequests"


class InternalError(StatusError):
    """500 InternalError."""

    code = 500
    reason = "InternalError"


_BY_REASON: Final[dict[str, type[StatusError]]] = {
    cls.reason: cls
    for cls in (
        BadRequestError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        MethodNotAllowedError,
        AlreadyExistsError,
        ConflictError,
        GoneError,
        UnsupportedMediaTypeError,
        InvalidError,
        TooManyRequestsError,
        InternalError,
    )
}
_BY_CODE: Final[dict[int, type[StatusError]]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    415: UnsupportedMediaTypeError,
    422: InvalidError,
    429: TooManyRequestsError,
}


def from_status(status: Status) -> StatusError:
    """Rebuild the matching ``StatusError`` subclass from a Status body (client side)."""
    cls = _BY_REASON.get(status.reason or "") or _BY_CODE.get(status.code or 0) or StatusError
    if status.reason == "Gone":
        cls = GoneError
    return cls(status)


def status_details(
    *,
    name: str | None = None,
    group: str | None = None,
    kind: str | None = None,
    uid: str | None = None,
    causes: tuple[StatusCause, ...] | None = None,
) -> StatusDetails:
    """``StatusDetails`` as upstream marshals it: every field is ``omitempty``, so an
    empty group (the core group), name or kind is left out, not sent as ``""``."""
    return StatusDetails(
        name=name or None, group=group or None, kind=kind or None, uid=uid or None, causes=causes
    )


def qualified(resource: str, group: str) -> str:
    """``pods`` / ``priorityclasses.scheduling.k8s.io`` (upstream ``GroupResource.String``)."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> NotFoundError:
    """``NewNotFound``: ``pods "x" not found``."""
    error = NotFoundError.build(
        f'{qualified(resource, group)} "{name}" not found',
        details=status_details(name=name, group=group, kind=resource),
    )
    assert isinstance(error, NotFoundError)
    return error


def already_exists(resource: str, group: str, name: str) -> AlreadyExistsError:
    """``NewAlreadyExists``: ``pods "x" already exists``."""
    error = AlreadyExistsError.build(
        f'{qualified(resource, group)} "{name}" already exists',
        details=status_details(name=name, group=group, kind=resource),
    )
    assert isinstance(error, AlreadyExistsError)
    return error


UNPROCESSABLE_TEXT: Final = "the server rejected our request due to an error in our request"
"""``NewGenericServerResponse``'s text for a 422: what upstream's patch handler answers
when a well-formed patch does not apply, and what client-go reports for a bare 422."""


OBJECT_MODIFIED: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(resource: str, group: str, name: str, detail: str = OBJECT_MODIFIED) -> ConflictError:
    """``NewConflict``: ``Operation cannot be fulfilled on pods "x": <detail>``."""
    error = ConflictError.build(
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {detail}',
        details=status_details(name=name, group=group, kind=resource),
    )
    assert isinstance(error, ConflictError)
    return error


def uid_precondition_failed(precondition: str, current: str | None) -> str:
    """Storage ``Preconditions.Check``'s detail for a uid precondition that does not match
    (a ``conflict``'s detail)."""
    return f"Precondition failed: UID in precondition: {precondition}, UID in object meta: {current or ''}"


def resource_version_precondition_failed(precondition: str, current: str | None) -> str:
    """Storage ``Preconditions.Check``'s detail for a resourceVersion precondition that
    does not match."""
    return (
        f"Precondition failed: ResourceVersion in precondition: {precondition}, "
        f"ResourceVersion in object meta: {current or ''}"
    )


def forbidden_error(resource: str, group: str, name: str, detail: str) -> ForbiddenError:
    """``NewForbidden``: ``pods "x" is forbidden: <detail>`` (name part dropped when empty)."""
    if not resource:
        message = f"forbidden: {detail}"
    elif name:
        message = f'{qualified(resource, group)} "{name}" is forbidden: {detail}'
    else:
        message = f"{qualified(resource, group)} is forbidden: {detail}"
    error = ForbiddenError.build(
        message, details=status_details(name=name, group=group, kind=resource)
    )
    assert isinstance(error, ForbiddenError)
    return error


def invalid_error(kind: str, group: str, name: str, errors: Sequence[FieldError]) -> InvalidError:
    """``NewInvalid``: ``PriorityClass.scheduling.k8s.io "x" is invalid: value: Required value``."""
    qualified_kind = f"{kind}.{group}" if group else kind
    message = f'{qualified_kind} "{name}" is invalid'
    if errors:
        message += f": {aggregate_message(errors)}"
    causes = tuple(
        StatusCause(reason=error.type.reason, message=error.body(), field=error.field)
        for error in errors
    )
    error = InvalidError.build(
        message, details=status_details(name=name, group=group, kind=kind, causes=causes)
    )
    assert isinstance(error, InvalidError)
    return error


def bad_request(message: str, causes: Sequence[StatusCause] = ()) -> BadRequestError:
    """``NewBadRequest``."""
    details = StatusDetails(causes=tuple(causes)) if causes else None
    error = BadRequestError.build(message, details=details)
    assert isinstance(error, BadRequestError)
    return error


def gone(message: str) -> GoneError:
    """``NewResourceExpired``: 410 with reason Expired."""
    error = GoneError.build(message)
    assert isinstance(error, GoneError)
    return error


def plain_error(message: str) -> StatusError:
    """A plain Go ``error`` that reached the API server's response writer
    (``ErrorToAPIStatus``): 500, no reason, the message as it is. kubectl prints it as
    ``Error from server: <message>``."""
    return StatusError(Status(status="Failure", message=message, code=500))


def internal_error(detail: str) -> InternalError:
    """``NewInternalError``: ``Internal error occurred: <detail>``."""
    error = InternalError.build(
        f"Internal error occurred: {detail}",
        details=StatusDetails(causes=(StatusCause(message=detail),)),
    )
    assert isinstance(error, InternalError)
    return error
