"""The root of every exception kubeprio raises on purpose.

Each layer owns a small hierarchy below this root and wraps the lower-level exceptions
it meets (``sqlite3``, ``yaml``, HTTP libraries) with ``raise ... from exc`` so that
nothing foreign leaks upward::

    KubeprioError
    ├── api.errors.StatusError          an API answer: carries a Kubernetes Status
    │   ├── BadRequestError             400
    │   ├── UnauthorizedError           401
    │   ├── ForbiddenError              403
    │   ├── NotFoundError               404
    │   ├── MethodNotAllowedError       405
    │   ├── AlreadyExistsError          409 (reason AlreadyExists)
    │   ├── ConflictError               409 (reason Conflict)
    │   ├── GoneError                   410 (reason Expired / Gone)
    │   ├── UnsupportedMediaTypeError   415
    │   ├── InvalidError                422, with every field error as a cause
    │   ├── TooManyRequestsError        429
    │   └── InternalError               500
    ├── api.quantity.QuantityError      a malformed resource quantity
    ├── api.manifest.ManifestError      unreadable YAML/JSON input, with file and document
    └── ControllerError                 retry policy of kubelet and controllers
        ├── TemporaryError(delay)       requeue after ``delay`` seconds
        └── PermanentError              record an Event and stop

This module uses the standard library only (layer 6 in docs/design.md).
"""

from __future__ import annotations


class KubeprioError(Exception):
    """Base class of every exception that kubeprio raises deliberately."""


class ControllerError(KubeprioError):
    """A reconcile step failed; subclasses say whether to retry."""


class TemporaryError(ControllerError):
    """Retry the reconcile after ``delay`` seconds."""

    def __init__(self, message: str, *, delay: float = 1.0) -> None:
        super().__init__(message)
        self.delay = delay


class PermanentError(ControllerError):
    """Give up on this key: record a Warning event and do not retry."""
