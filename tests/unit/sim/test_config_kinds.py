"""``kubeprio simulate`` takes ConfigMaps, Secrets and ServiceAccounts (DESIGN.md's input list).

They go through the full write path like every input (a Secret's ``stringData`` merged into
``data``), come back out of the API as written, and change no scheduling outcome: the
report of a run with them equals the report of the same run without them.
"""

from __future__ import annotations

from kubeprio.api import manifest
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import to_dict
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.sim.simulate import simulate

WORKLOAD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "10"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  serviceAccountName: bot
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: "1"}}
    envFrom: [{configMapRef: {name: settings}}, {secretRef: {name: creds}}]
"""

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default, labels: {app: web}}
immutable: true
data: {mode: fast}
binaryData: {blob: AAEC}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
type: kubernetes.io/basic-auth
data: {username: YWRtaW4=}
stringData: {password: s3cret}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: bot, namespace: default}
automountServiceAccountToken: false
imagePullSecrets: [{name: registry}]
"""


def _run(text: str) -> tuple[dict, object]:
    return simulate(manifest.parse_text(text, "input.yaml"), seed=0)


def test_config_kinds_load_round_trip_and_change_no_outcome():
    with_config, cluster = _run(CONFIG + "---\n" + WORKLOAD)
    without, _ = _run(WORKLOAD)
    assert with_config["rejected"] == []
    assert with_config["pods"] == without["pods"]
    assert with_config["preemptions"] == without["preemptions"]
    api = cluster.api  # type: ignore[attr-defined]
    config_map = to_dict(api.get(ConfigMap, "settings", "default"))
    assert (config_map["immutable"], config_map["data"], config_map["binaryData"]) == (
        True,
        {"mode": "fast"},
        {"blob": "AAEC"},
    )
    secret = to_dict(api.get(Secret, "creds", "default"))
    assert secret["type"] == "kubernetes.io/basic-auth"
    assert secret["data"] == {"username": "YWRtaW4=", "password": "czNjcmV0"}
    assert "stringData" not in secret
    account = to_dict(api.get(ServiceAccount, "bot", "default"))
    assert account["automountServiceAccountToken"] is False
    assert account["imagePullSecrets"] == [{"name": "registry"}]
