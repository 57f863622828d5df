"""Load on a running ``kubeprio serve`` over HTTPS: concurrent clients, and scheduling rate.

Run: ``python -m bench.serve_load [load|throughput|all] [options]``; prints one JSON
object per scenario. Each scenario starts its own ``kubeprio serve`` subprocess on a
fresh data directory (TLS, a token, the SQLite store) and drives it with ``httpx``
from this process, so client and server share the machine's cores.

* ``load`` — ``--clients`` (50) concurrent clients for ``--seconds`` (60): each client
  works in its own namespace, creating a pod then listing the namespace's pods, in a
  loop; every fifth client also keeps a watch on its namespace open. Reports requests,
  errors (anything but 201/200), p50/p99/max latency per verb, and checks that no
  acknowledged write is lost: every pod answered 201 is in the final list, and every
  watcher saw an ADDED event for each acknowledged pod of its namespace.
* ``throughput`` — ``--nodes`` (1000) nodes; ``--pods`` (5000) pods created through
  HTTP by ``--writers`` (32) concurrent clients; a watch on all pods records when each is
  bound. Reports the creation rate and the scheduling rate (pods bound per second from
  the first creation to the last bind), as scheduler_perf's SchedulingThroughput
  counts pods scheduled during the measured phase including the API writes, and the
  server's CPU time per pod over that phase (Linux), the steadier figure on a shared
  machine.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml


class Server:
    """A ``kubeprio serve`` subprocess and the credentials to reach it."""

    def __init__(self, args: Sequence[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="kubeprio-bench-"))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubeprio",
                "serve",
                "--data-dir",
                str(self.dir),
                "--port",
                "0",
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("export KUBECONFIG="):
                break
        else:
            raise RuntimeError("kubeprio serve did not start")
        config = yaml.safe_load((self.dir / "kubeconfig").read_text())
        cluster = config["clusters"][0]["cluster"]
        self.url = cluster["server"]
        self.ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
        self.token = config["users"][0]["user"]["token"]

    def cpu_seconds(self) -> float | None:
        """The server process's CPU time so far (user + system; None off Linux): the
        figure to compare between runs on a shared machine, where rates swing with the
        other processes' load."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def connect(self) -> Connection:
        """A new keep-alive HTTPS connection (TLS verified against the server's CA)."""
        host, port = self.url.removeprefix("https://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(
            host, int(port), ssl=ssl.create_default_context(cadata=self.ca)
        )
        return Connection(reader, writer, host, self.token)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Connection:
    """A minimal HTTP/1.1 client on one connection: the bench measures the server, and a
    full client library costs more CPU per request than the server on a shared machine."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, token: str
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.head = f"Host: {host}\r\nAuthorization: Bearer {token}\r\n"

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        """Send one request; return the status code and the body."""
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\n{self.head}Content-Length: {len(data)}\r\n"
        if data:
            head += "Content-Type: application/json\r\n"
        self.writer.write(head.encode() + b"\r\n" + data)
        status, headers = await self._head()
        return status, await self._body(headers)

    async def stream(self, path: str) -> Any:
        """GET a chunked stream (a watch); yield its lines."""
        self.writer.write(f"GET {path} HTTP/1.1\r\n{self.head}\r\n".encode())
        status, _ = await self._head()
        if status != 200:
            raise RuntimeError(f"watch {path}: {status}")
        buffer = b""
        while True:
            size = int((await self.reader.readline()).strip(), 16)
            if size == 0:
                return
            buffer += await self.reader.readexactly(size)
            await self.reader.readline()
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line

    async def _head(self) -> tuple[int, dict[str, str]]:
        status = int((await self.reader.readline()).split(b" ", 2)[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        return status, headers

    async def _body(self, headers: dict[str, str]) -> bytes:
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        chunks = []
        while (size := int((await self.reader.readline()).strip(), 16)) != 0:
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readline()
        await self.reader.readline()
        return b"".join(chunks)

    def close(self) -> None:
        """Close the connection."""
        self.writer.close()


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(1, -(-int(pct * len(ordered)) // 100)) - 1]


def _pod(name: str, cpu: str = "10m") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ]
        },
    }


def _summary(latencies: dict[str, list[float]]) -> dict[str, Any]:
    return {
        verb: {
            "requests": len(values),
            "p50_ms": round(percentile(values, 50) * 1000, 2),
            "p99_ms": round(percentile(values, 99) * 1000, 2),
            "max_ms": round(max(values, default=0.0) * 1000, 2),
        }
        for verb, values in sorted(latencies.items())
    }


async def _watch(server: Server, path: str, seen: set[str], on_event: Any = None) -> None:
    connection = await server.connect()
    try:
        async for line in connection.stream(f"{path}?watch=true&timeoutSeconds=3600"):
            event = json.loads(line)
            obj = event["object"]
            if event["type"] == "ADDED":
                seen.add(obj["metadata"]["name"])
            if on_event is not None:
                on_event(event["type"], obj)
    finally:
        connection.close()


async def load(clients: int, seconds: float, nodes: int) -> dict[str, Any]:
    """Concurrent create/list/watch clients; latency, errors and lost writes."""
    server = Server(["--nodes", str(nodes), "--node-cpu", "64", "--node-memory", "256Gi"])
    try:
        admin = await server.connect()
        for index in range(clients):
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"load-{index}"}}
            status, _ = await admin.request("POST", "/api/v1/namespaces", body)
            assert status == 201, status
        latencies: dict[str, list[float]] = {"create": [], "list": []}
        errors: list[str] = []
        acknowledged: dict[int, list[str]] = {i: [] for i in range(clients)}
        watched: dict[int, set[str]] = {}
        watchers = []
        for index in range(0, clients, 5):
            watched[index] = set()
            path = f"/api/v1/namespaces/load-{index}/pods"
            watchers.append(asyncio.create_task(_watch(server, path, watched[index])))
        await asyncio.sleep(0.5)
        deadline = time.perf_counter() + seconds

        async def worker(index: int) -> None:
            connection = await server.connect()
            path = f"/api/v1/namespaces/load-{index}/pods"
            serial = 0
            try:
                while time.perf_counter() < deadline:
                    name = f"p-{serial}"
                    serial += 1
                    started = time.perf_counter()
                    status, body = await connection.request("POST", path, _pod(name))
                    latencies["create"].append(time.perf_counter() - started)
                    if status == 201:
                        acknowledged[index].append(name)
                    else:
                        errors.append(f"create {status}: {body[:200]!r}")
                    started = time.perf_counter()
                    status, body = await connection.request("GET", path)
                    latencies["list"].append(time.perf_counter() - started)
                    if status != 200:
                        errors.append(f"list {status}: {body[:200]!r}")
            finally:
                connection.close()

        begin = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(clients)))
        elapsed = time.perf_counter() - begin
        await asyncio.sleep(1.0)
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        admin.close()
        admin = await server.connect()  # the first one idled past the keep-alive timeout
        lost = 0
        for index in range(clients):
            _, body = await admin.request("GET", f"/api/v1/namespaces/load-{index}/pods")
            names = {item["metadata"]["name"] for item in json.loads(body)["items"]}
            lost += len(set(acknowledged[index]) - names)
        admin.close()
        missed_events = sum(len(set(acknowledged[i]) - watched[i]) for i in watched)
        total = sum(len(v) for v in latencies.values())
        return {
            "scenario": "load",
            "clients": clients,
            "watchers": len(watchers),
            "seconds": round(elapsed, 1),
            "requests": total,
            "requests_per_second": round(total / elapsed, 1),
            "errors": len(errors),
            "first_errors": errors[:3],
            "acknowledged_pods": sum(len(v) for v in acknowledged.values()),
            "lost_writes": lost,
            "watch_events_missed": missed_events,
            "latency": _summary(latencies),
        }
    finally:
        server.stop()


async def throughput(nodes: int, pods: int, writers: int) -> dict[str, Any]:
    """Pods created through HTTP on ``nodes`` nodes: creation and scheduling rates."""
    server = Server(["--nodes", str(nodes), "--node-cpu", "32", "--node-memory", "128Gi"])
    try:
        bound_at: dict[str, float] = {}
        seen: set[str] = set()

        def on_event(kind: str, obj: dict[str, Any]) -> None:
            name = obj["metadata"]["name"]
            if obj["spec"].get("nodeName") and name not in bound_at:
                bound_at[name] = time.perf_counter()

        watcher = asyncio.create_task(
            _watch(server, "/api/v1/namespaces/default/pods", seen, on_event)
        )
        await asyncio.sleep(0.5)
        created_at: dict[str, float] = {}
        errors: list[str] = []
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in range(pods):
            queue.put_nowait(index)
        connections = [await server.connect() for _ in range(writers)]
        cpu_before = server.cpu_seconds()
        first = time.perf_counter()

        async def writer(connection: Connection) -> None:
            while True:
                try:
                    index = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                name = f"tp-{index}"
                status, body = await connection.request(
                    "POST", "/api/v1/namespaces/default/pods", _pod(name, "100m")
                )
                if status == 201:
                    created_at[name] = time.perf_counter()
                else:
                    errors.append(f"{status}: {body[:200]!r}")

        await asyncio.gather(*(writer(c) for c in connections))
        created = time.perf_counter()
        deadline = created + 300
        while len(bound_at) < len(created_at) and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        cpu_after = server.cpu_seconds()
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        last_bound = max(bound_at.values(), default=first)
        latencies = [bound_at[n] - created_at[n] for n in created_at if n in bound_at]
        _, body = await connections[0].request("GET", "/api/v1/namespaces/default/pods")
        placed = sum(1 for item in json.loads(body)["items"] if item["spec"].get("nodeName"))
        for connection in connections:
            connection.close()
        return {
            "scenario": "throughput",
            "nodes": nodes,
            "pods": pods,
            "writers": writers,
            "errors": len(errors),
            "created": len(created_at),
            "bound": len(bound_at),
            "placed_in_final_list": placed,
            "create_seconds": round(created - first, 2),
            "create_per_second": round(len(created_at) / (created - first), 1),
            "schedule_seconds": round(last_bound - first, 2),
            "scheduled_per_second": round(len(bound_at) / (last_bound - first), 1),
            "create_to_bind_p50_ms": round(percentile(latencies, 50) * 1000, 1),
            "create_to_bind_p99_ms": round(percentile(latencies, 99) * 1000, 1),
            # From the first create until every pod was bound (or the wait gave up).
            "server_cpu_ms_per_pod": (
                round((cpu_after - cpu_before) * 1000 / max(len(created_at), 1), 3)
                if cpu_before is not None and cpu_after is not None
                else None
            ),
        }
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options, run the scenarios, print JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.serve_load", description=__doc__)
    parser.add_argument("scenario", nargs="?", choices=("load", "throughput", "all"), default="all")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--load-nodes", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--writers", type=int, default=32)
    args = parser.parse_args(argv)
    if args.scenario in ("load", "all"):
        print(json.dumps(asyncio.run(load(args.clients, args.seconds, args.load_nodes))))
    if args.scenario in ("throughput", "all"):
        print(json.dumps(asyncio.run(throughput(args.nodes, args.pods, args.writers))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
