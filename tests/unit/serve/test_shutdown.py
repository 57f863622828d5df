"""``kubeprio serve`` shuts down without losing what the scheduler deferred.

The scheduler writes its events once it has nothing to schedule (as upstream's
broadcaster writes them off the scheduling path); a graceful stop must still write the
ones queued at that moment before the store closes.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from kubeprio.api.core import Event, Node
from kubeprio.serve.server import ServeOptions, Serving


def test_events_queued_at_shutdown_are_written(tmp_path: Path) -> None:
    serving = Serving(ServeOptions(data_dir=tmp_path, port=0, nodes=1), io.StringIO())

    async def scenario() -> None:
        running = asyncio.create_task(serving.run())
        while not serving.url:
            assert not running.done(), running
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # the driver settles, then waits for a write or a timer
        node = serving.plane.api.get(Node, "node-1")
        # Queued without a store write: the idle driver is not woken to flush it.
        serving.plane.scheduler.recorder.event(
            node, "Normal", "Testing", "queued at shutdown", action="Testing"
        )
        serving.stop.set()
        await running

    try:
        asyncio.run(scenario())
        found = [e for e in serving.plane.api.list(Event).items if e.reason == "Testing"]
        assert [e.message for e in found] == ["queued at shutdown"]
    finally:
        serving.close()
