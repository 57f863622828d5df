"""``/healthz``, ``/livez``, ``/readyz``: kube-apiserver's answers.

Upstream: ``k8s.io/apiserver/pkg/server/healthz/healthz.go`` (``handleRootHealth``:
``[+]name ok`` lines and ``<endpoint> check passed`` with ``?verbose``, 500 with
``[-]name failed: reason withheld`` and ``<endpoint> check failed`` on failure,
``?exclude=``; ``adaptCheckToHandler`` for ``/<endpoint>/<check>``), and the readyz
``shutdown`` check that fails once shutdown has begun.
"""

from __future__ import annotations

import random

import pytest

from kubeprio.apiserver import health
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from kubeprio.store.sqlite import SqliteStore
from tests.conftest import ManualClock
from tests.unit.apiserver.http_helpers import make_client


def checks(*, store: str | None = None, closing: bool = False) -> tuple[health.HealthCheck, ...]:
    return health.checks_for("readyz", store_failure=lambda: store, shutting_down=lambda: closing)


@pytest.mark.parametrize(
    ("query", "status", "body"),
    [
        ({}, 200, "ok"),
        (
            {"verbose": [""]},
            200,
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n[+]shutdown ok\n"
            "readyz check passed\n",
        ),
        (
            {"verbose": [""], "exclude": ["etcd", "shutdown"]},
            200,
            "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]informer-sync ok\n"
            "[+]shutdown excluded: ok\nreadyz check passed\n",
        ),
        (
            {"verbose": [""], "exclude": ["nope", "etcd", "also-nope"]},
            200,
            "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]informer-sync ok\n[+]shutdown ok\n"
            'warn: some health checks cannot be excluded: no matches for "also-nope", "nope"\n'
            "readyz check passed\n",
        ),
    ],
    ids=["plain", "verbose", "exclude", "exclude unknown"],
)
def test_healthy_answers(query, status, body):
    found = health.answer("readyz", checks(), query)
    assert (found.status, found.body) == (status, body)


def test_a_failing_check_answers_500_verbosely_and_withholds_the_reason():
    found = health.answer("readyz", checks(closing=True), {})
    assert found.status == 500
    assert found.body == (
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n"
        "[-]shutdown failed: reason withheld\nreadyz check failed\n"
    )
    assert found.failures == ("[-]shutdown failed: process is shutting down",)
    # Excluding the failing check makes the endpoint pass again.
    assert health.answer("readyz", checks(closing=True), {"exclude": ["shutdown"]}).status == 200


def test_livez_and_healthz_have_no_shutdown_or_informer_checks():
    for endpoint in ("livez", "healthz"):
        names = [
            c.name
            for c in health.checks_for(
                endpoint, store_failure=lambda: None, shutting_down=lambda: True
            )
        ]
        assert names == ["ping", "log", "etcd"]


def test_single_checks():
    assert health.answer_one(checks(), "etcd") == health.HealthAnswer(200, "ok")
    failed = health.answer_one(checks(store="database is closed"), "etcd")
    assert failed is not None
    assert (failed.status, failed.body) == (500, "internal server error: database is closed\n")
    assert health.answer_one(checks(), "nope") is None


def test_over_http_verbose_single_check_and_a_closed_store(tmp_path):
    store = SqliteStore(tmp_path / "kubeprio.db")
    api = ApiService(store, clock=ManualClock(), rng=random.Random(1))
    http = make_client(api)
    verbose = http.get("/livez?verbose")
    assert verbose.status_code == 200
    assert verbose.headers["content-type"] == "text/plain; charset=utf-8"
    assert verbose.text == "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n"
    assert http.get("/readyz/shutdown").text == "ok"
    assert http.get("/readyz/nope").status_code == 404
    store.close()
    closed = http.get("/readyz")
    assert closed.status_code == 500
    assert "[-]etcd failed: reason withheld\n" in closed.text
    assert closed.text.endswith("readyz check failed\n")


def test_readyz_fails_once_shutdown_began_while_livez_stays_ok():
    http = make_client(ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(1)))
    http.app.state.kube.close_watches()  # what kubeprio serve does when shutting down
    assert http.get("/readyz").status_code == 500
    assert http.get("/livez").text == "ok"
