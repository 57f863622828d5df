"""A controller's write that waits on admission webhooks: the retryable error and the opt-in.

What it is: on a real cluster a controller's write that reaches a slow admission webhook
blocks that controller's worker until the answer is in (the controller manager is
another process; nothing else waits). kubeprio's controllers share ``kubeprio serve``'s
event loop with the API server, so such a write must not wait in place: inside
``RETRYABLE_WRITES`` the in-process API service stops the write before it writes
anything, posts the reviews off the loop and raises ``WritePendingError``. The
controller then handles it as a failed API call: its workqueue requeues the key
(``controllers.base``), which is brought back as soon as the answers are in
(``when_answered``) or after ``retry_after`` seconds at the latest; the retry of the same
write finds the answers (``apiserver.controllerwebhooks``).

Only callers that handle the error opt in (``controllers.base.Controller.run_once``,
and through ``client.answeredretry`` the scheduler and its VolumeBinding PreBind, the
event recorders, the pod GC, node lifecycle and taint eviction controllers, and the
kubelets' start, status, delete, lease and node writes); every other in-process write
(the simulation's set-up) calls its webhooks in place. Each unit of work sets
``WRITE_SCOPE``, so that a unit run twice in one stretch of the loop (a key requeued by
an informer event while its create waits) retries its writes instead of starting new
ones.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Final

from kubeprio.errors import KubeprioError

RETRYABLE_WRITES: Final[contextvars.ContextVar[bool]] = contextvars.ContextVar(
    "kubeprio_retryable_writes", default=False
)
"""True while the running caller handles ``WritePendingError`` (requeues and retries)."""


WRITE_SCOPE: Final[contextvars.ContextVar[object | None]] = contextvars.ContextVar(
    "kubeprio_write_scope", default=None
)
"""The unit of work running now (a controller's sync of one key, one retried write):
identical writes within it are distinct writes (a ReplicaSet's pods from one template),
while the same write in a later unit is the retry of the first. None: the event loop's
synchronous stretch is the unit (``apiserver.controllerwebhooks``)."""


class WritePendingError(KubeprioError):
    """Nothing was written: the write waits on admission webhook answers; retry it once
    they are in (``when_answered``), or after ``retry_after`` seconds."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float,
        when_answered: Callable[[Callable[[], None]], None],
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.when_answered = when_answered
