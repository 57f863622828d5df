"""``AnsweredRetry.run``: a write's result now, or ``None`` while it waits on webhook
answers (then the write runs again once they are in, and a second write of the same key
is not started meanwhile: upstream's blocked goroutine, which nobody starts twice)."""

from __future__ import annotations

from collections.abc import Callable

from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.writepending import WritePendingError


class _Answers:
    """Stands for the webhook answers a pending write waits on."""

    def __init__(self) -> None:
        self.listeners: list[Callable[[], None]] = []

    def pending(self) -> WritePendingError:
        return WritePendingError("waits", retry_after=1.0, when_answered=self.listeners.append)

    def arrive(self) -> None:
        listeners, self.listeners = self.listeners, []
        for listener in listeners:
            listener()


def test_a_write_that_runs_returns_its_result() -> None:
    writes = AnsweredRetry("test")
    assert writes.run("k", lambda: 42) == 42
    assert writes.run("k", lambda: False) is False
    assert writes.parked == 0


def test_a_pending_write_returns_none_and_runs_again_once_answered() -> None:
    writes = AnsweredRetry("test")
    answers = _Answers()
    results: list[str] = []

    def write() -> str:
        if not results:
            results.append("pending")
            raise answers.pending()
        results.append("written")
        return "done"

    assert writes.run("k", write) is None
    assert writes.waiting("k")
    # Another write of the same key is not started while the first waits.
    assert writes.run("k", lambda: "other") is None
    assert results == ["pending"]
    answers.arrive()
    assert results == ["pending", "written"]
    assert not writes.waiting("k")
    assert writes.parked == 1
