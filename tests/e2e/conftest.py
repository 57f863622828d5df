"""A real API server for end-to-end tests: uvicorn on 127.0.0.1:0 over an in-memory store.

Plain HTTP, no authentication (``kubeprio serve`` adds TLS and tokens). The server runs in
a background thread with its own event loop; tests talk to it only over HTTP.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from kubeprio.admission.defaults import default_chain
from kubeprio.apiserver.http import create_app
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import RealClock
from kubeprio.store.memory import MemoryStore
from tests.e2e.webhookserver import WebhookServer

KUBECTL = shutil.which("kubectl")


class Server:
    """A running server: its URL and a kubectl runner with a fresh discovery cache."""

    def __init__(self, url: str, cache_dir: Path) -> None:
        self.url = url
        self.cache_dir = cache_dir

    def kubectl_args(self, *args: str) -> list[str]:
        assert KUBECTL is not None
        return [KUBECTL, "--server", self.url, "--cache-dir", str(self.cache_dir), *args]

    def kubectl(
        self, *args: str, stdin: str | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.kubectl_args(*args),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    service = ApiService(MemoryStore(), clock=RealClock(), rng=random.Random(0))
    service.admission = default_chain(service.listers)
    config = uvicorn.Config(
        create_app(service), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
    )
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    port = uv.servers[0].sockets[0].getsockname()[1]
    try:
        yield Server(f"http://127.0.0.1:{port}", tmp_path / "kube-cache")
    finally:
        uv.should_exit = True
        uv.force_exit = True
        thread.join(timeout=10)


needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    """A real HTTPS admission webhook server (``tests.e2e.webhookserver``) for a module."""
    server = WebhookServer(tmp_path_factory.mktemp("webhook")).start()
    try:
        yield server
    finally:
        server.stop()
