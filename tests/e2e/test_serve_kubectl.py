"""``kubeprio serve`` end to end: the real kubectl over TLS with bearer tokens.

One server (``--preset kestrel``, three 4-CPU nodes) for the module; the drain test gets
its own two-node server. Outputs and error lines are what a real cluster prints
(kubectl-wire.md; upstream texts cited per test).
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.serving import KUBECTL, ServeProcess, eventually, needs_kubectl, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

ALICE = "kubeprio-alice"


@pytest.fixture(scope="module")
def kestrel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(
        tmp_path_factory, "serve", ["--preset", "kestrel", "--nodes", "3", "--node-cpu", "4"]
    ) as server:
        yield server


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_get_pc_shows_the_system_and_preset_classes(kestrel):
    lines = [line.split() for line in kestrel.ok("get", "pc").splitlines()]
    assert lines[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE"]
    rows = {line[0]: line[1:3] for line in lines[1:]}
    assert rows["system-cluster-critical"] == ["2000000000", "false"]
    assert rows["system-node-critical"] == ["2000001000", "false"]
    assert rows["uber-user-preempt-high"] == ["2000", "false"]
    assert len(rows) == 8


def test_kubeconfig_holds_the_ca_the_https_url_and_an_admin_token(kestrel):
    config = yaml.safe_load(kestrel.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == kestrel.url
    assert cluster["server"].startswith("https://127.0.0.1:")
    assert base64.b64decode(cluster["certificate-authority-data"]).startswith(
        b"-----BEGIN CERTIFICATE-----"
    )
    assert config["current-context"] == "kubeprio"
    assert {c["name"] for c in config["contexts"]} == {"kubeprio", ALICE}
    assert kestrel.kubeconfig.stat().st_mode & 0o777 == 0o600


def test_requests_without_a_valid_token_are_unauthorized(kestrel):
    # kubectl's text for a 401 (``errors.IsUnauthorized`` in kubectl's cmdutil.checkErr).
    # With a cold discovery cache kubectl first logs its failed discovery: warm it.
    kestrel.ok("get", "pc")
    result = kestrel.kubectl("get", "pods", "--token", "not-a-token")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: You must be logged in to the server (Unauthorized)"
    config = yaml.safe_load(kestrel.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    context = ssl.create_default_context(cadata=ca.decode())
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{kestrel.url}/api/v1/pods", context=context, timeout=5)
    assert caught.value.code == 401
    body = json.loads(caught.value.read())
    assert (body["kind"], body["reason"], body["message"]) == (
        "Status",
        "Unauthorized",
        "Unauthorized",
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("get", "pods", "-n", "default"),
            'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
        ),
        (
            ("get", "pods", "-A"),
            'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope',
        ),
        (
            ("get", "nodes"),
            'Error from server (Forbidden): nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
        ),
        (
            ("delete", "pc", "uber-user-significant"),
            'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "uber-user-significant" is forbidden: User "alice" cannot delete resource "priorityclasses" in API group "scheduling.k8s.io" at the cluster scope',
        ),
        (
            ("create", "deployment", "x", "--image=nginx", "-n", "platform-monitoring"),
            'error: failed to create deployment: deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "platform-monitoring"',
        ),
        (
            ("get", "--raw", "/readyz/etcd"),
            'Error from server (Forbidden): forbidden: User "alice" cannot get path "/readyz/etcd"',
        ),
    ],
    ids=[
        "other-namespace",
        "all-namespaces",
        "nodes",
        "delete-class",
        "create-elsewhere",
        "non-resource-path",
    ],
)
def test_a_tenant_user_acts_only_inside_its_tenants_namespaces(kestrel, args, expected):
    # Upstream: responsewriters.forbiddenMessage wrapped in NewForbidden (authorization filter).
    result = kestrel.kubectl(*args, context=ALICE)
    assert result.returncode == 1
    assert result.stderr.strip() == expected


def test_a_tenant_user_may_read_classes_and_work_in_its_namespaces(kestrel):
    assert "uber-user-significant" in kestrel.ok("get", "pc", context=ALICE)
    assert kestrel.ok("get", "ns", "kestrel-web", "-o", "name", context=ALICE) == (
        "namespace/kestrel-web\n"
    )
    kestrel.ok("get", "pods", "-n", "kestrel-web", context=ALICE)


@pytest.mark.parametrize(
    ("args", "context", "code", "stdout"),
    [
        (("create", "pods", "-n", "kestrel-web"), ALICE, 0, "yes"),
        (("create", "pods", "--subresource", "eviction", "-n", "kestrel-web"), ALICE, 0, "yes"),
        (("create", "pods", "-n", "platform-monitoring"), ALICE, 1,
         'no - kubeprio: namespace "platform-monitoring" belongs to no Tenant'),
        (("create", "events", "-n", "kestrel-web"), ALICE, 1,
         'no - kubeprio: tenant users may only read "events"'),
        (("get", "/version"), ALICE, 0, "yes"),
        (("create", "pods", "-n", "platform-monitoring", "--as", "alice"), None, 1,
         'no - kubeprio: namespace "platform-monitoring" belongs to no Tenant'),
        (("*", "*"), None, 0, "yes"),
    ],
    ids=["own-namespace", "eviction", "elsewhere", "events", "path", "as-alice", "admin"],
)  # fmt: skip
def test_auth_can_i(kestrel, args, context, code, stdout):
    # kubectl's RunAccessCheck: "yes", or "no - <reason>" and exit code 1.
    result = kestrel.kubectl("auth", "can-i", *args, context=context)
    assert (result.returncode, result.stdout.strip()) == (code, stdout), result.stderr


def test_auth_can_i_list_shows_the_tenant_users_rules(kestrel):
    lines = kestrel.ok("auth", "can-i", "--list", "-n", "kestrel-web", context=ALICE)
    rows = [line.split() for line in lines.splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["pods", "[]", "[]", "[create", "delete", "deletecollection", "get", "list",
            "patch", "update", "watch]"] in rows  # fmt: skip
    assert ["events", "[]", "[]", "[get", "list", "watch]"] in rows
    assert ["pods/eviction", "[]", "[]", "[create]"] in rows
    # Upstream's edit role (in admin) lets a tenant impersonate its namespaces' accounts.
    accounts = next(row for row in rows if row[0] == "serviceaccounts")
    assert "impersonate" in " ".join(accounts[3:]), accounts
    assert ["namespaces", "[]", "[kestrel-web]", "[get]"] in rows
    assert ["[/apis/*]", "[]", "[get]"] in rows
    elsewhere = kestrel.ok("auth", "can-i", "--list", "-n", "platform-monitoring", context=ALICE)
    assert not any(line.startswith("pods ") for line in elsewhere.splitlines())
    admin = [line.split() for line in kestrel.ok("auth", "can-i", "--list").splitlines()]
    assert admin[1:] == [["*.*", "[]", "[]", "[*]"], ["[*]", "[]", "[*]"]]


def test_auth_whoami_and_impersonation(kestrel):
    rows = [
        line.split(None, 1) for line in kestrel.ok("auth", "whoami", context=ALICE).splitlines()
    ]
    assert rows == [["ATTRIBUTE", "VALUE"], ["Username", "alice"], ["UID", "alice"],
                    ["Groups", "[system:authenticated]"]]  # fmt: skip
    who = json.loads(
        kestrel.ok("auth", "whoami", "--as", "bob", "--as-group", "devs", "-o", "json")
    )
    assert who["status"]["userInfo"] == {
        "username": "bob",
        "groups": ["devs", "system:authenticated"],
    }
    # Discovery first, so kubectl's cache holds it: with a cold cache kubectl's discovery
    # runs as bob too, is refused, and client-go reads a JSON 403 on discovery as
    # "unknown" (newUnstructuredResponseError), against a real cluster as here.
    kestrel.ok("api-resources", "--api-group=scheduling.k8s.io", context=ALICE)
    refused = kestrel.kubectl("get", "pods", "-n", "kestrel-web", "--as", "bob", context=ALICE)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot '
        'impersonate resource "users" in API group "" at the cluster scope'
    )
    assert kestrel.ok("get", "--raw", "/readyz", context=ALICE) == "ok"


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: kestrel-web
spec:
  priorityClassName: {pc}
  {extra}
  containers:
  - name: c
    image: nginx
"""


@pytest.mark.parametrize(
    ("pc", "extra", "message"),
    [
        ("nosuch", "", "no PriorityClass with name nosuch was found"),
        (
            "uber-user-important",
            "",
            'PriorityClass "uber-user-important" is not allowed in namespace "kestrel-web" (tenant "kestrel"); allowed: uber-user-preempt-high, uber-user-preempt-medium, uber-user-significant',
        ),
        (
            "system-node-critical",
            "",
            'User "alice" cannot use PriorityClass "system-node-critical": system priority classes are reserved for cluster administrators',
        ),
        (
            "uber-user-preempt-high",
            "priority: 1000",
            "the integer value of priority (1000) must not be provided in pod spec; priority admission controller computed 2000 from the given PriorityClass name",
        ),
    ],
    ids=["unknown-class", "allowlist", "system-class", "priority-mismatch"],
)
def test_admission_rejections_show_kubectls_forbidden_line(kestrel, tmp_path, pc, extra, message):
    # Upstream Priority admission (plugin/pkg/admission/priority/admission.go) for the
    # unknown class and the mismatch; kubeprio's tenant and system-class plugins otherwise.
    manifest = _write(tmp_path, "pod.yaml", POD.format(name="p", pc=pc, extra=extra))
    result = kestrel.kubectl("create", "-f", str(manifest), context=ALICE)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "{manifest}": pods "p" is forbidden: {message}'
    )


LOW = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: kestrel-research}
spec:
  replicas: 6
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      priorityClassName: uber-user-significant
      terminationGracePeriodSeconds: 3
      containers:
      - name: work
        image: busybox
        resources: {requests: {cpu: "2"}}
"""

HIGH = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: kestrel-research}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: uber-user-preempt-high
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: "2"}}
"""


def _pods(server: ServeProcess, ns: str) -> list[dict]:
    return server.json("get", "pods", "-n", ns)["items"]


def _phase_by_app(pods: list[dict], app: str) -> list[str]:
    return sorted(
        p["status"].get("phase", "") for p in pods if p["metadata"]["labels"]["app"] == app
    )


def test_preemption_driven_by_kubectl(kestrel, tmp_path):
    ns = "kestrel-research"
    kestrel.ok("apply", "-f", str(_write(tmp_path, "low.yaml", LOW)), context=ALICE)
    eventually(lambda: _phase_by_app(_pods(kestrel, ns), "batch") == ["Running"] * 6)
    with kestrel.watch_events("pods", "-n", ns, into=tmp_path / "watch.json") as events:
        kestrel.ok("apply", "-f", str(_write(tmp_path, "high.yaml", HIGH)), context=ALICE)

        def settled() -> list[dict] | None:
            pods = _pods(kestrel, ns)
            web = _phase_by_app(pods, "web")
            batch = _phase_by_app(pods, "batch")
            done = web == ["Running"] * 2 and batch == ["Pending"] * 2 + ["Running"] * 4
            return pods if done and len(pods) == 8 else None

        pods = eventually(settled, timeout=30)
    # Victims: the DisruptionTarget condition (reason PreemptionByScheduler), then graceful
    # deletion with the pod's own 3 s grace period, then gone.
    victims = {
        e["object"]["metadata"]["name"]
        for e in events
        if any(
            c["type"] == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler"
            for c in e["object"]["status"].get("conditions", [])
        )
    }
    assert len(victims) == 2
    deleting = [
        e["object"]["metadata"]
        for e in events
        if e["object"]["metadata"]["name"] in victims
        and e["object"]["metadata"].get("deletionTimestamp")
    ]
    first = {}
    for metadata in deleting:
        first.setdefault(metadata["name"], metadata["deletionGracePeriodSeconds"])
    # ... and the kubelet's final DELETE with grace 0 once the containers exited.
    assert first == dict.fromkeys(victims, 3)
    deleted = {e["object"]["metadata"]["name"] for e in events if e["type"] == "DELETED"}
    assert deleted == victims
    # The preemptors were nominated while Pending, then ran there.
    nominated = {
        e["object"]["metadata"]["name"]: e["object"]["status"]["nominatedNodeName"]
        for e in events
        if e["object"]["metadata"]["labels"]["app"] == "web"
        and e["object"]["status"].get("phase") == "Pending"
        and e["object"]["status"].get("nominatedNodeName")
    }
    web = {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods
        if p["metadata"]["labels"]["app"] == "web"
    }
    assert nominated == web
    wide = kestrel.ok("get", "pods", "-n", ns, "-o", "wide", "-l", "app=web").splitlines()
    assert wide[0].split()[-4:-2] == ["NOMINATED", "NODE"]
    # The ReplicaSet's replacements wait: significant (policy Never) may not preempt.
    pending = [p for p in pods if p["status"].get("phase") == "Pending"]
    describe = kestrel.ok("describe", "pod", "-n", ns, pending[0]["metadata"]["name"])
    assert "preemption: not eligible due to preemptionPolicy=Never." in describe
    web_name = sorted(web)[0]
    describe = kestrel.ok("describe", "pod", "-n", ns, web_name)
    assert f"Successfully assigned {ns}/{web_name} to {web[web_name]}" in describe
    # The kubelet's container events, as a real kubelet (v1.32 kuberuntime) records them:
    # image present, container created and started; then, for each victim, its container
    # stopped when the graceful deletion reached the node.
    for reason, message in [
        ("Pulled", 'Container image "nginx" already present on machine'),
        ("Created", "Created container: web"),
        ("Started", "Started container web"),
    ]:
        assert re.search(rf"Normal\s+{reason}\s+\S+\s+kubelet\s+{re.escape(message)}", describe)
    preempted = kestrel.ok("get", "events", "-n", ns, "--field-selector", "reason=Preempted")
    assert preempted.count("Preempted by pod ") == 2
    killing = kestrel.ok(
        "get", "events", "-n", ns, "--field-selector", "reason=Killing", "-o", "json"
    )
    stopped = {e["involvedObject"]["name"] for e in json.loads(killing)["items"]}
    assert victims <= stopped


DRAINED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: api
        image: nginx
        resources: {requests: {cpu: "1"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: api, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: api}}
"""


def test_drain_evicts_through_the_eviction_api_and_respects_the_pdb(tmp_path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "2"]).start()
    try:
        server.ok("cordon", "node-2")
        server.ok("apply", "-f", str(_write(tmp_path, "api.yaml", DRAINED)))
        eventually(lambda: _phase_by_app(_pods(server, "default"), "api") == ["Running"] * 2)
        eventually(
            lambda: server.json("get", "pdb", "api")["status"].get("disruptionsAllowed") == 1
        )
        assert KUBECTL is not None
        drain = subprocess.Popen(
            [
                KUBECTL,
                "--kubeconfig",
                str(server.kubeconfig),
                "--cache-dir",
                str(server.cache_dir),
                "drain",
                "node-1",
                "--timeout=30s",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # One pod may go (minAvailable 1 of 2); its replacement cannot run while node-2
            # is cordoned, so the second eviction is refused with 429 and retried.
            eventually(
                lambda: (
                    any(p["metadata"].get("deletionTimestamp") for p in _pods(server, "default"))
                    or None
                )
            )
            eventually(
                lambda: (
                    len(
                        [
                            p
                            for p in _pods(server, "default")
                            if p["status"].get("phase") == "Pending"
                        ]
                    )
                    == 1
                )
            )
            server.ok("uncordon", "node-2")
            stdout, stderr = drain.communicate(timeout=40)
        finally:
            drain.kill()
            drain.communicate()
        assert drain.returncode == 0, stderr
        # kubectl/pkg/drain: a 429 from pods/eviction is retried after 5 s.
        assert (
            "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."
            in stderr
        )
        assert stdout.splitlines()[-1] == "node/node-1 drained"
        assert {p["spec"]["nodeName"] for p in _pods(server, "default")} == {"node-2"}
    finally:
        assert server.stop() == 0, server.log()


def test_kubectl_logs_answers_as_for_containers_that_print_nothing(kestrel):
    """``kubectl logs`` (pods/log): an empty log for a started container, upstream's 400s
    for a missing previous instance or container, and ``-f`` returns once the container
    stops (upstream ``validateContainerLogStatus`` and ``validateContainer`` texts)."""
    ns = "kestrel-web"
    kestrel.ok(
        "run", "short", "-n", ns, "--image=busybox", "--restart=Never",
        "--annotations=kubeprio.io/duration=3s",
    )  # fmt: skip
    eventually(lambda: "Running" in kestrel.ok("get", "pod", "short", "-n", ns, "--no-headers"))
    assert kestrel.ok("logs", "short", "-n", ns, context=ALICE) == ""
    previous = kestrel.kubectl("logs", "short", "-n", ns, "--previous")
    assert previous.returncode == 1
    assert previous.stderr.strip() == (
        'Error from server (BadRequest): previous terminated container "short" in pod "short" '
        "not found"
    )
    followed = kestrel.kubectl("logs", "-f", "short", "-n", ns, timeout=30)
    assert (followed.returncode, followed.stdout) == (0, "")
    assert "Completed" in kestrel.ok("get", "pod", "short", "-n", ns, "--no-headers")
    # A container the pod lacks: kubectl asks the server, which names the pod.
    missing = kestrel.kubectl("logs", "short", "-n", ns, "-c", "nope")
    assert missing.returncode == 1
    assert "container nope is not valid for pod short" in missing.stderr


def test_kubectl_exec_attach_and_port_forward_say_why_they_cannot_run(kestrel):
    """``kubectl exec/attach/port-forward``: upstream's checks (missing pod, bad container)
    in its words, then a clear 500 instead of a 404: a simulated container runs nothing."""
    ns = "kestrel-web"
    kestrel.ok("run", "shell", "-n", ns, "--image=busybox", "--restart=Never")
    eventually(lambda: "Running" in kestrel.ok("get", "pod", "shell", "-n", ns, "--no-headers"))
    no_process = "kubeprio's simulated containers run no processes"
    exec_ = kestrel.kubectl("exec", "shell", "-n", ns, "--", "ls")
    assert exec_.returncode == 1
    assert exec_.stderr.strip() == (
        "Error from server (InternalError): Internal error occurred: error executing command "
        f"in container: {no_process}"
    )
    bad = kestrel.kubectl("exec", "shell", "-n", ns, "-c", "nope", "--", "ls")
    assert bad.stderr.strip() == (
        "Error from server (BadRequest): container nope is not valid for pod shell"
    )
    missing = kestrel.kubectl("exec", "nosuch", "-n", ns, "--", "ls")
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "nosuch" not found'
    forward = kestrel.kubectl("port-forward", "shell", "-n", ns, "18080:80", timeout=20)
    assert forward.returncode == 1
    assert f"error forwarding port: {no_process}" in forward.stderr


def test_describe_node_shows_the_kubelets_lease_and_its_renewals(kestrel):
    """Every kubelet keeps ``kube-node-lease/<node>`` renewed (upstream's node lease
    controller), so ``kubectl describe node`` prints its Lease section instead of
    ``Failed to get lease``, and ``kubectl get leases`` lists one per node."""
    lines = [
        line.split() for line in kestrel.ok("get", "leases", "-n", "kube-node-lease").splitlines()
    ]
    assert lines[0] == ["NAME", "HOLDER", "AGE"]
    assert [line[:2] for line in lines[1:]] == [[f"node-{i}", f"node-{i}"] for i in (1, 2, 3)]
    describe = kestrel.ok("describe", "node", "node-1")
    section = describe[describe.index("Lease:") :].splitlines()[:4]
    assert [line.split(":", 1)[0].strip() for line in section] == [
        "Lease",
        "HolderIdentity",
        "AcquireTime",
        "RenewTime",
    ]
    assert section[1].split() == ["HolderIdentity:", "node-1"]
    assert section[2].split() == ["AcquireTime:", "<unset>"]
    assert "Failed to get lease" not in describe
    first = kestrel.json("get", "lease", "node-1", "-n", "kube-node-lease")
    assert first["metadata"]["ownerReferences"][0]["kind"] == "Node"
    renewed = eventually(
        lambda: (
            lease
            if (lease := kestrel.json("get", "lease", "node-1", "-n", "kube-node-lease"))["spec"][
                "renewTime"
            ]
            != first["spec"]["renewTime"]
            else None
        ),
        timeout=15,
        every=1,
    )
    assert renewed["metadata"]["uid"] == first["metadata"]["uid"]
