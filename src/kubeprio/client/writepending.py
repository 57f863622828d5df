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

Only callers that handle the error opt in (``controllers.base.Controller.run_once``);
every other in-process write (the scheduler, kubelets, the simulation) calls its
webhooks in place, as before.
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
