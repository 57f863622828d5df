"""``kubeprio serve`` restarts: SIGTERM then start, and ``kill -9`` then start.

Issue 5: "state survives restarts and kill -9 at any point without losing an
acknowledged write". Acknowledged means the server answered 2xx; the SQLite store
commits before it answers (docs/storage.md).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.e2e.serving import KUBECTL, ServeProcess, eventually, needs_kubectl

pytestmark = [pytest.mark.e2e, needs_kubectl]

OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: gold}
value: 1000
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: team}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: gold
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 500m}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: team}
stringData: {password: s3cret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
binaryData: {blob: AAEC}
"""

KINDS = "pc,ns,pdb,deploy,rs,pods,nodes,cm,secrets,sa"


def _identities(server: ServeProcess) -> dict[str, tuple[str, str]]:
    items = server.json("get", KINDS, "-A")["items"]
    return {
        f"{i['kind']}/{i['metadata'].get('namespace', '')}/{i['metadata']['name']}": (
            i["metadata"]["uid"],
            i["metadata"]["creationTimestamp"],
        )
        for i in items
    }


def _running(server: ServeProcess) -> bool:
    pods = server.json("get", "pods", "-n", "team")["items"]
    return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods)


def test_sigterm_stops_gracefully_and_a_restart_keeps_every_object(tmp_path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "2"]).start()
    try:
        server.ok("apply", "-f", "-", stdin=OBJECTS)
        eventually(lambda: _running(server))
        # The namespace's default ServiceAccount and root CA ConfigMap: after the restart
        # the controllers find them and make no new ones.
        eventually(lambda: "ServiceAccount/team/default" in _identities(server))
        eventually(lambda: "ConfigMap/team/kube-root-ca.crt" in _identities(server))
        before = _identities(server)
        ca_before = yaml.safe_load(server.kubeconfig.read_text())["clusters"][0]
    finally:
        assert server.stop() == 0, server.log()
    assert "kubeprio serve: stopped at " in server.log()
    server.start()
    try:
        after = _identities(server)
        assert after == before
        ca_after = yaml.safe_load(server.kubeconfig.read_text())["clusters"][0]
        assert (
            ca_after["cluster"]["certificate-authority-data"]
            == (ca_before["cluster"]["certificate-authority-data"])
        )
        # The kubelets adopt their pods; the controllers carry on from the stored state.
        eventually(lambda: _running(server))
        server.ok("scale", "deploy", "web", "-n", "team", "--replicas=3")
        eventually(lambda: len(server.json("get", "pods", "-n", "team")["items"]) == 3)
    finally:
        assert server.stop() == 0, server.log()


def test_sigterm_ends_open_watches(tmp_path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "1"]).start()
    try:
        assert KUBECTL is not None
        watcher = subprocess.Popen(
            [
                KUBECTL,
                "--kubeconfig",
                str(server.kubeconfig),
                "--cache-dir",
                str(server.cache_dir),
                "get",
                "pods",
                "-A",
                "-w",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1)  # let kubectl open its watch (real time)
        started = time.monotonic()
        assert server.stop() == 0, server.log()
        assert time.monotonic() - started < 5
        watcher.communicate(timeout=10)
    finally:
        server.kill()


class _Writer:
    """Creates PriorityClasses one after another over HTTPS; remembers the acknowledged."""

    def __init__(self, server: ServeProcess) -> None:
        config = yaml.safe_load(server.kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
        self.token = config["users"][0]["user"]["token"]
        self.context = ssl.create_default_context(cadata=ca.decode())
        self.host, port = server.url.removeprefix("https://").rsplit(":", 1)
        self.port = int(port)
        self.acknowledged: list[str] = []
        self.failed: BaseException | None = None

    def run(self) -> None:
        connection = http.client.HTTPSConnection(
            self.host, self.port, context=self.context, timeout=5
        )
        try:
            connection.connect()
            # http.client writes headers and body separately: without TCP_NODELAY, Nagle's
            # algorithm and delayed ACKs cost 40 ms per request.
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for index in range(100_000):
                name = f"pc-{index}"
                body = json.dumps(
                    {
                        "apiVersion": "scheduling.k8s.io/v1",
                        "kind": "PriorityClass",
                        "metadata": {"name": name},
                        "value": index,
                    }
                )
                connection.request(
                    "POST",
                    "/apis/scheduling.k8s.io/v1/priorityclasses",
                    body=body,
                    headers={
                        "Authorization": f"Bearer {self.token}",
                        "Content-Type": "application/json",
                    },
                )
                response = connection.getresponse()
                response.read()
                if response.status != 201:
                    raise AssertionError(f"{name}: {response.status}")
                self.acknowledged.append(name)
        except (OSError, http.client.HTTPException) as exc:
            self.failed = exc
        finally:
            connection.close()


def test_kill_9_loses_no_acknowledged_write(tmp_path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "1"]).start()
    try:
        writer = _Writer(server)
        thread = threading.Thread(target=writer.run)
        thread.start()
        eventually(lambda: len(writer.acknowledged) >= 200, every=0.05)
        server.kill()
        thread.join(timeout=10)
        assert writer.failed is not None  # the writer was cut off mid-stream
        acknowledged = set(writer.acknowledged)
    finally:
        server.kill()
    server.start()
    try:
        stored = {
            i["metadata"]["name"]
            for i in server.json("get", "pc")["items"]
            if i["metadata"]["name"].startswith("pc-")
        }
        assert acknowledged <= stored
        assert len(stored - acknowledged) <= 1  # at most the write in flight
    finally:
        assert server.stop() == 0, server.log()


def test_a_second_server_on_the_same_data_directory_is_refused(tmp_path: Path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "1"]).start()
    try:
        second = ServeProcess(tmp_path / "data", tmp_path / "cache2")
        with pytest.raises(AssertionError, match="is another kubeprio serve using"):
            second.start()
    finally:
        assert server.stop() == 0, server.log()


def test_service_allocations_survive_a_restart_on_another_port(tmp_path):
    """The registry rebuilds its cluster IPs and node ports from the stored Services (the
    repair controllers), and the kubernetes Service follows the new port (the reconciler)."""
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "1"]).start()
    try:
        server.ok("create", "service", "nodeport", "np", "--tcp=80:8080", "-n", "default")
        taken = server.json("get", "svc", "np", "-n", "default")["spec"]
    finally:
        assert server.stop() == 0, server.log()
    server.start()
    try:
        port = int(server.url.rsplit(":", 1)[1])
        kubernetes = server.json("get", "svc", "kubernetes", "-n", "default")
        assert kubernetes["spec"]["ports"][0]["targetPort"] == port
        clash = server.kubectl(
            "create", "service", "clusterip", "clash", "--tcp=80",
            f"--clusterip={taken['clusterIP']}", "-n", "default",
        )  # fmt: skip
        assert "provided IP is already allocated" in clash.stderr
        node_port = taken["ports"][0]["nodePort"]
        again = server.kubectl(
            "create", "service", "nodeport", "np2", "--tcp=80:8080",
            f"--node-port={node_port}", "-n", "default",
        )  # fmt: skip
        assert "provided port is already allocated" in again.stderr
    finally:
        assert server.stop() == 0, server.log()
