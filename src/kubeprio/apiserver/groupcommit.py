"""Group commit of HTTP writes: the writes of one event-loop turn share one COMMIT.

What it is: each HTTP write used to be its own SQLite transaction (BEGIN, its rows,
COMMIT), while the in-process components' writes of one driver round already share one
(``Store.batch``, docs/storage.md). ``GroupCommit.run(attempt)`` runs a write's
synchronous attempt inside an open batch, opening one if none is open and scheduling its
COMMIT as the next callback of the event loop; every write that runs before that
callback (other requests whose turn comes first, the driver's round, which nests) joins
it. etcd does the same with the entries of one raft round: one fsync for many proposals.

What a client sees does not change, because no reply leaves before the COMMIT that makes
its data durable: ``durable()`` waits for the open group, and the HTTP layer awaits it
before it starts any response (a write's, and a read's too, since a read served from the
in-memory index may show a write of the open group). A failed COMMIT fails every reply
of the group with the store's ``StorageFailureError``, as a write's own failed COMMIT
did, and the store refuses use from then on. Watchers hear of the group's writes only
after its COMMIT (the batch publishes its events then), so a ``kill -9`` before it loses
only writes nobody was told about.

Who drives it: ``apiserver.http`` runs each write through ``run`` and awaits
``durable`` before a response starts; ``serve.server`` builds it over the SQLite store
and commits what is open before the store closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from kubeprio.store.errors import StorageFailureError

R = TypeVar("R")


class BatchingStore(Protocol):
    """What a group needs of the store: batches, and whether a batch's writes were lost."""

    def batch(self) -> AbstractContextManager[None]:
        """One transaction for the writes made inside."""
        ...

    def failure(self) -> str | None:
        """Why the store refuses use (a batch ending so was rolled back), or None."""
        ...


class GroupCommit:
    """Writes of one loop turn in one batch; replies wait for its COMMIT."""

    def __init__(self, store: BatchingStore) -> None:
        self._store = store
        self._open: AbstractContextManager[None] | None = None
        self._committed: asyncio.Future[None] | None = None
        self.groups = 0
        """Groups committed (or failed) so far: with ``writes``, how well writes group."""
        self.writes = 0

    @property
    def pending(self) -> bool:
        """Whether a group is open: its writes are visible in memory but not yet durable."""
        return self._committed is not None

    def run(self, attempt: Callable[[], R]) -> R:
        """Run ``attempt`` (a synchronous write) in the open group, opening one."""
        if self._open is None:
            loop = asyncio.get_running_loop()
            batch = self._store.batch()
            batch.__enter__()  # raises, and opens nothing, when the store is unusable
            self._open = batch
            self._committed = loop.create_future()
            loop.call_soon(self.commit)
        self.writes += 1
        return attempt()

    def commit(self) -> None:
        """COMMIT the open group now (the loop's callback; also before the store closes)
        and release the replies waiting on it."""
        batch, committed = self._open, self._committed
        if batch is None or committed is None:
            return
        self._open = self._committed = None
        self.groups += 1
        failure: BaseException | None = None
        try:
            batch.__exit__(None, None, None)
        except Exception as exc:
            failure = exc
        else:
            reason = self._store.failure()
            if reason is not None:
                # The batch was rolled back: its writes never reached the file.
                failure = StorageFailureError(f"the store is unusable ({reason})")
        if failure is None:
            committed.set_result(None)
        else:
            committed.set_exception(failure)
            # Retrieved here so that a group no reply waited on logs no warning.
            committed.exception()

    async def durable(self) -> None:
        """Return once every write made so far is committed; raise what failed its COMMIT."""
        committed = self._committed
        if committed is not None:
            await asyncio.shield(committed)
