"""Storage-level failures, independent of HTTP and of Kubernetes Status bodies.

The API service maps them to ``api.errors`` (NotFound, AlreadyExists, Conflict, Gone)::

    StoreError (kubeprio.errors.KubeprioError)
    ├── KeyNotFoundError       no object at the key
    ├── KeyExistsError         create of an existing key
    ├── RevisionConflictError  compare-and-swap failed: the object changed meanwhile
    ├── RevisionCompactedError a watch asked for history that was dropped
    └── StorageFailureError    the back-end failed (disk, database); wraps the cause
"""

from __future__ import annotations

from kubeprio.errors import KubeprioError


class StoreError(KubeprioError):
    """Base class of storage failures."""


class KeyNotFoundError(StoreError):
    """No object is stored at the key."""


class KeyExistsError(StoreError):
    """An object already exists at the key."""


class RevisionConflictError(StoreError):
    """The stored object's revision differs from the expected one."""

    def __init__(self, message: str, *, current: int) -> None:
        super().__init__(message)
        self.current = current


class RevisionCompactedError(StoreError):
    """The requested revision is older than the retained history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class StorageFailureError(StoreError):
    """The back-end itself failed."""
