"""Group commit of HTTP writes (``apiserver.groupcommit``) over a real SQLite store.

The writes of one event-loop turn share one transaction, watchers hear of them only after
its COMMIT, no reply leaves before it, and a failed COMMIT fails every write of the group
(the store then refuses use, as after a write's own failed COMMIT).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.apiserver.groupcommit import GroupCommit
from kubeprio.apiserver.http import create_app
from kubeprio.apiserver.service import ApiService
from kubeprio.store.errors import KeyExistsError, StorageFailureError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod
from tests.conftest import ManualClock


def key(name: str) -> ObjectKey:
    return ObjectKey("pods", "default", name)


def test_the_writes_of_one_turn_share_one_commit_published_after_it(tmp_path: Path) -> None:
    path = tmp_path / "kubeprio.db"
    store = SqliteStore(path)
    group = GroupCommit(store)
    watch = store.watch(KeyPrefix("pods"), 0)
    seen_at_reply: dict[str, tuple[bool, int]] = {}

    async def write(name: str) -> None:
        group.run(lambda: store.create(key(name), pod(name).build()))
        await group.durable()
        # What a reply would see: nothing of the group still uncommitted.
        seen_at_reply[name] = (store._conn.in_transaction, len(watch.poll()))

    async def scenario() -> None:
        first = asyncio.create_task(write("a"))
        second = asyncio.create_task(write("b"))
        await asyncio.sleep(0)  # both tasks run their writes in this turn
        assert group.pending
        assert store._conn.in_transaction
        assert watch.poll() == []  # nobody hears of an uncommitted write
        await asyncio.gather(first, second)

    asyncio.run(scenario())
    assert (group.groups, group.writes) == (1, 2)
    assert not group.pending
    # The first reply found the transaction committed and both events published.
    assert seen_at_reply["a"] == (False, 2)
    store.close()
    with SqliteStore(path) as reopened:
        assert [o.metadata.name for o in reopened.list(KeyPrefix("pods"))[0]] == ["a", "b"]
        assert reopened.verify() == []


def test_a_batch_made_while_a_group_is_open_commits_with_it(tmp_path: Path) -> None:
    """The serve driver's round between two HTTP writes' turn and the group's COMMIT
    nests in the group: one COMMIT for both."""
    store = SqliteStore(tmp_path / "kubeprio.db")
    group = GroupCommit(store)

    async def scenario() -> None:
        group.run(lambda: store.create(key("http"), pod("http").build()))
        with store.batch():
            store.create(key("driver"), pod("driver").build())
        assert store._conn.in_transaction
        await group.durable()
        assert not store._conn.in_transaction

    asyncio.run(scenario())
    assert group.groups == 1
    store.close()


def test_a_failed_write_leaves_the_rest_of_its_group(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "kubeprio.db")
    group = GroupCommit(store)

    async def scenario() -> None:
        group.run(lambda: store.create(key("a"), pod("a").build()))
        with pytest.raises(KeyExistsError):
            group.run(lambda: store.create(key("a"), pod("a").build()))
        group.run(lambda: store.create(key("b"), pod("b").build()))
        await group.durable()

    asyncio.run(scenario())
    assert [o.metadata.name for o in store.list(KeyPrefix("pods"))[0]] == ["a", "b"]
    assert store.verify() == []
    store.close()


class _FailingCommit:
    """The store's connection, except that COMMIT fails (as on an I/O error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("disk I/O error")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_a_failed_commit_fails_every_reply_of_the_group(tmp_path: Path) -> None:
    path = tmp_path / "kubeprio.db"
    store = SqliteStore(path)
    store.create(key("before"), pod("before").build())
    group = GroupCommit(store)
    real = store._conn
    store._conn = _FailingCommit(real)  # type: ignore[assignment]
    outcomes: list[str] = []

    async def write(name: str) -> None:
        group.run(lambda: store.create(key(name), pod(name).build()))
        try:
            await group.durable()
        except StorageFailureError as exc:
            outcomes.append(str(exc))

    async def scenario() -> None:
        await asyncio.gather(write("a"), write("b"))

    asyncio.run(scenario())
    assert len(outcomes) == 2
    assert all("disk I/O error" in text for text in outcomes)
    with pytest.raises(StorageFailureError, match="unusable"):
        store.get(key("before"))
    store._conn = real
    store.close()
    with SqliteStore(path) as reopened:
        assert [o.metadata.name for o in reopened.list(KeyPrefix("pods"))[0]] == ["before"]


def test_an_http_write_is_committed_before_its_reply(tmp_path: Path) -> None:
    """Over the HTTP adapter: a create joins a group and its 201 comes after the COMMIT."""

    async def scenario() -> None:
        # The store is used on this thread's loop, as in serve (httpx calls the app here).
        store = SqliteStore(tmp_path / "kubeprio.db")
        api = ApiService(store, clock=ManualClock(), rng=random.Random(1))
        api.admission = default_chain(api.listers)
        app = create_app(api)
        group = GroupCommit(store)
        app.state.kube.group_commit = group
        committed_at_reply: list[bool] = []
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            body = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
            created = await http.post("/api/v1/namespaces/default/pods", json=body)
            committed_at_reply.append(not store._conn.in_transaction)
            assert created.status_code == 201, created.text
            assert (group.groups, group.writes) == (1, 1)
            assert (await http.get("/api/v1/namespaces/default/pods/web")).status_code == 200
            assert group.groups == 1  # a read opens no group
        assert committed_at_reply == [True]
        store.close()

    asyncio.run(scenario())
