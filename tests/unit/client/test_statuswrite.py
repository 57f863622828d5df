"""``write_status``: a status computed from the latest copy, written with
``update_status`` and retried on conflict (client-go ``retry.RetryOnConflict``).

Checked against the in-process ``ApiService``: a current copy costs one write; a stale
copy conflicts, is re-read and the change recomputed on the latest (another writer's
change survives); nothing is written when the change is empty; a deleted object or one
replaced under the same name (another uid) is left alone; a conflict on every one of
the five attempts (client-go's ``DefaultRetry``) is raised.
"""

from __future__ import annotations

import random

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api import errors
from kubeprio.api.core import Pod, PodStatus
from kubeprio.api.model import evolve
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest
from kubeprio.client.statuswrite import MAX_ATTEMPTS, write_status
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock


def _api() -> ApiService:
    return ApiService(
        MemoryStore(), clock=ManualClock(), rng=random.Random(3), admission=AdmissionChain()
    )


def _with_message(message: str):
    def change(latest: Pod) -> Pod:
        return evolve(latest, status=evolve(latest.status or PodStatus(), message=message))

    return change


def test_a_current_copy_is_written_once():
    api = _api()
    created = api.create(pod("p").build())
    stored = write_status(api, created, _with_message("hello"))
    assert stored is not None
    assert stored.status.message == "hello"
    assert int(stored.metadata.resource_version) == int(created.metadata.resource_version) + 1


def test_a_stale_copy_is_recomputed_on_the_latest():
    api = _api()
    stale = api.create(pod("p").build())
    latest = api.get(Pod, "p", "default")
    api.update_status(evolve(latest, status=evolve(latest.status, reason="SomeoneElse")))
    stored = write_status(api, stale, _with_message("mine"))
    assert stored is not None
    assert (stored.status.reason, stored.status.message) == ("SomeoneElse", "mine")


def test_an_empty_change_writes_nothing():
    api = _api()
    created = api.create(pod("p").build())
    result = write_status(api, created, lambda latest: None)
    assert result is created
    assert api.get(Pod, "p", "default").metadata.resource_version == (
        created.metadata.resource_version
    )


def test_a_deleted_object_is_left_alone():
    api = _api()
    created = api.create(pod("p").build())
    api.delete(Pod, "p", "default", options=DeleteRequest(grace_period_seconds=0))
    assert write_status(api, created, _with_message("x")) is None


def test_a_replacement_with_another_uid_is_left_alone():
    api = _api()
    first = api.create(pod("p").build())
    api.delete(Pod, "p", "default", options=DeleteRequest(grace_period_seconds=0))
    second = api.create(pod("p").build())
    assert second.metadata.uid != first.metadata.uid
    assert write_status(api, first, _with_message("x")) is None
    assert api.get(Pod, "p", "default").status == second.status


@pytest.mark.parametrize("read_first", [False, True])
def test_a_conflict_on_every_attempt_is_raised(read_first):
    api = _api()
    created = api.create(pod("p").build())
    attempts = []

    def racing(latest: Pod) -> Pod:
        # Another writer gets in between every read and write.
        attempts.append(latest.metadata.resource_version)
        current = api.get(Pod, "p", "default")
        api.update_status(evolve(current, status=evolve(current.status, reason=str(len(attempts)))))
        return evolve(latest, status=evolve(latest.status, message="mine"))

    with pytest.raises(errors.ConflictError):
        write_status(api, created, racing, read_first=read_first)
    assert len(attempts) == MAX_ATTEMPTS
    assert api.get(Pod, "p", "default").status.message is None
