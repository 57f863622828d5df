"""``kubeprio serve`` as a subprocess, for end-to-end tests with the real kubectl.

``ServeProcess`` starts ``python -m kubeprio serve --port 0`` on a data directory, waits
for the ``export KUBECONFIG=...`` line (the server listens by then), and runs kubectl with
``--kubeconfig DATA_DIR/kubeconfig`` and a fresh ``--cache-dir``. ``stop`` sends SIGTERM
(graceful), ``kill`` SIGKILL. A reader thread collects the server's output so a failure
can show it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
START_TIMEOUT = 30.0

T = TypeVar("T")


class ServeProcess:
    """One ``kubeprio serve`` process over ``data_dir``."""

    def __init__(self, data_dir: Path, cache_dir: Path, args: Sequence[str] = ()) -> None:
        self.data_dir = data_dir
        self.cache_dir = cache_dir
        self.args = list(args)
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.url = ""

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def start(self) -> ServeProcess:
        self.output = []
        self._lines = queue.Queue()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubeprio",
                "serve",
                "--data-dir",
                str(self.data_dir),
                "--port",
                "0",
                *self.args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                self.kill()
                raise AssertionError(f"kubeprio serve did not start:\n{self.log()}") from None
            if line is None:
                self.process.wait()
                self._close()
                raise AssertionError(f"kubeprio serve exited:\n{self.log()}")
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].split(" ", 1)[0]
            if line.startswith("export KUBECONFIG="):
                return self

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.output.append(line)
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def log(self) -> str:
        return "".join(self.output)

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM and wait; the exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"kubeprio serve ignored SIGTERM:\n{self.log()}") from None
        finally:
            self._close()

    def _close(self) -> None:
        assert self.process is not None
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def kill(self) -> None:
        """SIGKILL (``kill -9``) and reap."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            self._close()

    def kubectl(
        self, *args: str, stdin: str | None = None, timeout: float = 30, context: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        command = [
            KUBECTL,
            "--kubeconfig",
            str(self.kubeconfig),
            "--cache-dir",
            str(self.cache_dir),
        ]
        if context is not None:
            command += ["--context", context]
        return subprocess.run(
            [*command, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    @contextlib.contextmanager
    def watch_events(self, *args: str, into: Path) -> Iterator[list[Any]]:
        """``kubectl get ARGS -w -o json --output-watch-events`` for the ``with`` block; the
        events it printed are in the yielded list once the block is over.

        kubectl writes into a file, not a pipe: a pipe holds 64 KiB, about twenty events of
        pods that carry a token volume, and a kubectl that cannot write stops printing.
        """
        assert KUBECTL is not None
        events: list[Any] = []
        with into.open("w") as out:
            watcher = subprocess.Popen(
                [
                    KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                    str(self.cache_dir), "get", *args, "-w", "-o", "json", "--output-watch-events",
                ],
                stdout=out,
                stderr=subprocess.DEVNULL,
                text=True,
            )  # fmt: skip
            try:
                yield events
            finally:
                watcher.terminate()
                watcher.wait(timeout=10)
        events.extend(json_stream(into.read_text()))

    def ok(self, *args: str, stdin: str | None = None, context: str | None = None) -> str:
        """kubectl that must succeed; its stdout."""
        result = self.kubectl(*args, stdin=stdin, context=context)
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json"))

    def client(self, context: str | None = None) -> k8s.ApiClient:
        """The official Python client configured from ``DATA_DIR/kubeconfig`` (CA, the
        admin's token, or ``context``'s user); close it, e.g. with ``with``."""
        api: k8s.ApiClient = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(self.kubeconfig), context=context
        )
        return api


@contextlib.contextmanager
def running(
    tmp_path_factory: pytest.TempPathFactory, name: str, args: Sequence[str] = ()
) -> Iterator[ServeProcess]:
    """A server on a fresh data directory for as long as the block runs (a test module's
    fixture: ``with running(...) as server: yield server``); it must stop cleanly, exit 0."""
    base = tmp_path_factory.mktemp(name)
    server = ServeProcess(base / "data", base / "cache", args).start()
    try:
        yield server
    finally:
        assert server.stop() == 0, server.log()


@contextlib.contextmanager
def running_with_policy_and_crd(
    tmp_path_factory: pytest.TempPathFactory, name: str, *, policy: str, crd: str, crd_name: str
) -> Iterator[ServeProcess]:
    """``running`` with one node, ``policy`` (a ValidatingAdmissionPolicy and its
    binding) applied, and the CustomResourceDefinition ``crd`` (named ``crd_name``)
    created and Established."""
    with running(tmp_path_factory, name, ["--nodes", "1"]) as server:
        server.ok("apply", "-f", "-", stdin=policy)
        assert server.ok("apply", "-f", "-", stdin=crd) == (
            f"customresourcedefinition.apiextensions.k8s.io/{crd_name} created\n"
        )
        server.ok("wait", "--for=condition=Established", f"crd/{crd_name}", "--timeout=20s")
        yield server


CLIENT_SOCKET_WARNINGS: Final = (
    # urllib3 (inside the official client) leaves its sockets, a watch's too, to the
    # garbage collector.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
)
"""The marks of a module whose tests use the official Python client."""

_NAMESPACE_NUMBERS = itertools.count(1)


def new_namespace(server: ServeProcess, prefix: str) -> str:
    """Create a namespace of its own for one test (``<prefix>-<n>``), as a user would."""
    name = f"{prefix}-{next(_NAMESPACE_NUMBERS)}"
    server.ok("create", "ns", name)
    return name


def table_rows(text: str) -> list[list[str]]:
    """kubectl's table output as rows of cells (blank lines left out)."""
    return [line.split() for line in text.splitlines() if line.strip()]


def eventually(probe: Callable[[], T | None], *, timeout: float = 20, every: float = 0.2) -> T:
    """Poll ``probe`` until it returns something truthy (real time: the server is live)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached in {timeout}s (last: {value!r})")
        time.sleep(every)


def described_failed_scheduling(server: ServeProcess, ns: str, pod: str) -> str:
    """``kubectl describe pod`` once it shows the pod's FailedScheduling event (polled)."""

    def described() -> str | None:
        out = server.ok("describe", "pod", pod, "-n", ns)
        return out if "FailedScheduling" in out else None

    return eventually(described)


def json_stream(text: str) -> list[Any]:
    """The objects of concatenated JSON documents (``kubectl get -w -o json``)."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return out
        obj, index = decoder.raw_decode(text, index)
        out.append(obj)
