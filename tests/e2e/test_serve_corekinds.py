"""ConfigMaps, Secrets and ServiceAccounts against a live ``kubeprio serve`` with the real
kubectl (v1.32) and the official Python client.

One server for the module, each test in its own namespace (made with ``kubectl create
ns``). Upstream behaviour checked, as a user sees it on a real cluster:

* ``kubectl create configmap/secret generic/secret tls/sa`` (protobuf bodies), ``get``
  tables (``printConfigMap``/``printSecret``/``printServiceAccount``), ``describe``,
  ``-o yaml`` round trips of every field, ``apply`` twice, ``replace``, patches (SMP merges
  a ServiceAccount's ``secrets`` by ``name``), label and field selectors;
* ``ValidateConfigMapUpdate``'s refusal of an immutable ConfigMap, as kubectl's one line;
* the service account controller and root CA publisher: ``default`` and
  ``kube-root-ca.crt`` in a namespace made a moment ago, restored when deleted;
* the tenant authorizer: alice writes Secrets in her namespace, not elsewhere;
* ResourceQuota's ``configmaps`` (counting ``kube-root-ca.crt``, as a real cluster does),
  ``services.nodeports`` (a NodePort Service refused, the multi-tenant rule) and
  ``count/serviceaccounts``;
* the Python client's ``string_data``, read back as ``data``.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

ALICE = "kubeprio-alice"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(
        tmp_path_factory, "serve-corekinds", ["--preset", "kestrel", "--nodes", "1"]
    ) as server:
        yield server


@pytest.fixture
def ns(served: ServeProcess) -> str:
    """A namespace of the test's own, made as a user would."""
    name = new_namespace(served, "ck")
    return name


def _yaml(served: ServeProcess, *args: str) -> dict:
    return yaml.safe_load(served.ok("get", *args, "-o", "yaml"))


def test_a_new_namespace_gets_the_default_account_and_the_root_ca(served, ns):
    """serviceaccounts_controller (default) and rootcacertpublisher (kube-root-ca.crt)."""
    sa = eventually(lambda: served.kubectl("get", "sa", "default", "-n", ns).returncode == 0)
    assert sa
    eventually(lambda: served.kubectl("get", "cm", "kube-root-ca.crt", "-n", ns).returncode == 0)
    rows = table_rows(served.ok("get", "sa", "default", "-n", ns))
    assert rows[0] == ["NAME", "SECRETS", "AGE"]
    assert rows[1][:2] == ["default", "0"]
    root = _yaml(served, "cm", "kube-root-ca.crt", "-n", ns)
    ca = (served.data_dir / "pki" / "ca.crt").read_text()
    assert root["data"] == {"ca.crt": ca}
    assert root["metadata"]["annotations"]["kubernetes.io/description"].startswith(
        "Contains a CA bundle that can be used to verify the kube-apiserver"
    )
    # Deleted, both come back (the controllers watch their deletes).
    uid = _yaml(served, "sa", "default", "-n", ns)["metadata"]["uid"]
    served.ok("delete", "sa", "default", "-n", ns)
    served.ok("delete", "cm", "kube-root-ca.crt", "-n", ns)
    eventually(
        lambda: (
            served.kubectl("get", "cm", "kube-root-ca.crt", "-n", ns).returncode == 0
            and _uid_changed(served, ns, uid)
        )
    )


def _uid_changed(served: ServeProcess, ns: str, uid: str) -> bool:
    result = served.kubectl("get", "sa", "default", "-n", ns, "-o", "jsonpath={.metadata.uid}")
    return result.returncode == 0 and result.stdout not in ("", uid)


def test_create_get_and_describe_a_configmap(served, ns, tmp_path):
    """kubectl create configmap --from-literal/--from-file; printConfigMap; describe."""
    (tmp_path / "app.properties").write_text("color=blue\n")
    served.ok(
        "create", "configmap", "settings", "-n", ns, "--from-literal=mode=fast",
        f"--from-file={tmp_path / 'app.properties'}",
    )  # fmt: skip
    stored = _yaml(served, "cm", "settings", "-n", ns)
    assert stored["data"] == {"mode": "fast", "app.properties": "color=blue\n"}
    rows = table_rows(served.ok("get", "cm", "-n", ns))
    assert rows[0] == ["NAME", "DATA", "AGE"]
    assert ["settings", "2"] in [row[:2] for row in rows]
    describe = served.ok("describe", "cm", "settings", "-n", ns)
    assert "Name:         settings" in describe
    assert "mode:\n----\nfast" in describe


def test_every_field_round_trips_through_yaml(served, ns):
    """-o yaml gives back what was created: data, binaryData, immutable, type, labels,
    secrets, imagePullSecrets, automountServiceAccountToken; stringData becomes data."""
    manifest = f"""\
apiVersion: v1
kind: ConfigMap
metadata: {{name: full, namespace: {ns}, labels: {{tier: web}}}}
immutable: true
data: {{a: "1"}}
binaryData: {{b: AAEC}}
---
apiVersion: v1
kind: Secret
metadata: {{name: full, namespace: {ns}}}
type: example.com/custom
immutable: false
data: {{token: c2VjcmV0}}
stringData: {{extra: plain}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: full, namespace: {ns}}}
automountServiceAccountToken: false
imagePullSecrets: [{{name: registry}}]
secrets: [{{name: full, uid: dropped}}]
"""
    served.ok("create", "-f", "-", stdin=manifest)
    cm = _yaml(served, "cm", "full", "-n", ns)
    assert (cm["immutable"], cm["data"], cm["binaryData"]) == (True, {"a": "1"}, {"b": "AAEC"})
    assert cm["metadata"]["labels"] == {"tier": "web"}
    secret = _yaml(served, "secret", "full", "-n", ns)
    assert secret["type"] == "example.com/custom"
    assert secret["immutable"] is False
    assert "stringData" not in secret
    assert secret["data"] == {"token": "c2VjcmV0", "extra": base64.b64encode(b"plain").decode()}
    sa = _yaml(served, "sa", "full", "-n", ns)
    assert sa["automountServiceAccountToken"] is False
    assert sa["imagePullSecrets"] == [{"name": "registry"}]
    assert sa["secrets"] == [{"name": "full"}]  # cleanSecretReferences keeps the name


def test_create_secret_generic_and_tls(served, ns, tmp_path):
    """kubectl create secret generic/tls; printSecret's TYPE and DATA; describe shows sizes."""
    served.ok(
        "create", "secret", "generic", "db", "-n", ns, "--from-literal=user=admin",
        "--from-literal=password=s3cret",
    )  # fmt: skip
    assert _yaml(served, "secret", "db", "-n", ns)["data"] == {
        "user": "YWRtaW4=",
        "password": "czNjcmV0",
    }
    cert, key = _key_pair(tmp_path)
    served.ok("create", "secret", "tls", "web-tls", "-n", ns, f"--cert={cert}", f"--key={key}")
    rows = table_rows(served.ok("get", "secret", "-n", ns))
    assert rows[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert [row[:3] for row in rows[1:]] == [
        ["db", "Opaque", "2"],
        ["web-tls", "kubernetes.io/tls", "2"],
    ]
    eventually(lambda: served.kubectl("get", "sa", "default", "-n", ns).returncode == 0)
    eventually(lambda: served.kubectl("get", "cm", "kube-root-ca.crt", "-n", ns).returncode == 0)
    combined = served.ok("get", "cm,secret,sa", "-n", ns)
    headers = [line.split() for line in combined.splitlines() if line.startswith("NAME")]
    assert headers == [
        ["NAME", "DATA", "AGE"],
        ["NAME", "TYPE", "DATA", "AGE"],
        ["NAME", "SECRETS", "AGE"],
    ]
    assert "secret/web-tls   kubernetes.io/tls   2" in combined
    tls = _yaml(served, "secret", "web-tls", "-n", ns)
    assert base64.b64decode(tls["data"]["tls.crt"]) == cert.read_bytes()
    describe = served.ok("describe", "secret", "db", "-n", ns)
    assert "Type:  Opaque" in describe
    assert "user:      5 bytes" in describe
    # Field selector on type (SelectableFields: metadata.name, metadata.namespace, type).
    listed = served.ok(
        "get", "secrets", "-n", ns, "--field-selector", "type=kubernetes.io/tls", "-o", "name"
    )
    assert listed.split() == ["secret/web-tls"]


def _key_pair(tmp_path: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web.example.com")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_a_tls_secret_without_a_key_pair_is_stored_with_a_warning(served, ns):
    """warningsForSecret: tls.X509KeyPair's error as a Warning header."""
    manifest = f"""\
apiVersion: v1
kind: Secret
metadata: {{name: half, namespace: {ns}}}
type: kubernetes.io/tls
stringData: {{tls.crt: "not a certificate", tls.key: "not a key"}}
"""
    result = served.kubectl("create", "-f", "-", stdin=manifest)
    assert result.returncode == 0, result.stderr
    assert "Warning: tls: failed to find any PEM data in certificate input" in result.stderr


def test_typed_secrets_need_their_keys(served, ns):
    """ValidateSecret: a service-account-token Secret needs its account's name."""
    result = served.kubectl(
        "create", "secret", "generic", "tok", "-n", ns,
        "--type=kubernetes.io/service-account-token",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'error: failed to create secret Secret "tok" is invalid: '
        "metadata.annotations[kubernetes.io/service-account.name]: Required value"
    )


def test_create_sa_get_describe_and_patch(served, ns):
    """kubectl create sa; printServiceAccount; describe; SMP merges secrets by name."""
    served.ok("create", "sa", "bot", "-n", ns)
    served.ok("patch", "sa", "bot", "-n", ns, "-p", '{"secrets":[{"name":"a"}]}')
    served.ok("patch", "sa", "bot", "-n", ns, "-p", '{"secrets":[{"name":"b"}]}')
    assert _yaml(served, "sa", "bot", "-n", ns)["secrets"] == [{"name": "b"}, {"name": "a"}]
    rows = table_rows(served.ok("get", "sa", "bot", "-n", ns))
    assert rows[1][:2] == ["bot", "2"]
    describe = served.ok("describe", "sa", "bot", "-n", ns)
    assert "Mountable secrets:   a" in describe or "Mountable secrets:   b" in describe
    # A merge patch replaces the list; a JSON patch edits it.
    served.ok("patch", "sa", "bot", "-n", ns, "--type=merge", "-p", '{"secrets":[{"name":"c"}]}')
    served.ok(
        "patch", "sa", "bot", "-n", ns, "--type=json",
        "-p", '[{"op":"add","path":"/automountServiceAccountToken","value":false}]',
    )  # fmt: skip
    sa = _yaml(served, "sa", "bot", "-n", ns)
    assert (sa["secrets"], sa["automountServiceAccountToken"]) == ([{"name": "c"}], False)


def test_apply_twice_then_replace_then_an_immutable_refusal(served, ns, tmp_path):
    """Client-side apply (unchanged the second time), replace, then ValidateConfigMapUpdate."""
    path = tmp_path / "cm.yaml"
    path.write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app, namespace: {ns}, "
        "labels: {app: web}}\ndata: {level: info}\n"
    )
    assert served.ok("apply", "-f", str(path)).strip() == "configmap/app created"
    assert served.ok("apply", "-f", str(path)).strip() == "configmap/app unchanged"
    path.write_text(path.read_text().replace("level: info", "level: debug"))
    assert served.ok("apply", "-f", str(path)).strip() == "configmap/app configured"
    assert _yaml(served, "cm", "app", "-n", ns)["data"] == {"level": "debug"}
    listed = served.ok("get", "cm", "-n", ns, "-l", "app=web", "-o", "name")
    assert listed.split() == ["configmap/app"]
    # kubectl edit's path: read, change, PUT (replace), now freezing it.
    current = _yaml(served, "cm", "app", "-n", ns)
    current["data"]["level"] = "warn"
    current["immutable"] = True
    assert served.ok("replace", "-f", "-", stdin=yaml.safe_dump(current)).strip() == (
        "configmap/app replaced"
    )
    refused = served.kubectl("patch", "cm", "app", "-n", ns, "-p", '{"data":{"level":"error"}}')
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'The ConfigMap "app" is invalid: data: Forbidden: field is immutable when '
        "`immutable` is set"
    )
    # replace saved the frozen object as last-applied: re-applying the old file unsets
    # immutable and changes data, and kubectl lists both causes.
    path.write_text(path.read_text().replace("level: debug", "level: error"))
    both = served.kubectl("apply", "-f", str(path))
    assert both.stderr.strip().splitlines() == [
        'The ConfigMap "app" is invalid: ',
        "* immutable: Forbidden: field is immutable when `immutable` is set",
        "* data: Forbidden: field is immutable when `immutable` is set",
    ]
    unset = served.kubectl("patch", "cm", "app", "-n", ns, "-p", '{"immutable":false}')
    assert unset.stderr.strip() == (
        'The ConfigMap "app" is invalid: immutable: Forbidden: field is immutable when '
        "`immutable` is set"
    )
    bad_key = served.kubectl("create", "-f", "-", stdin=_bad_key_manifest(ns))
    assert bad_key.stderr.strip().startswith(
        'The ConfigMap "bad" is invalid: data[a b]: Invalid value: "a b": a valid config key '
        "must consist of alphanumeric characters"
    )


def _bad_key_manifest(ns: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: bad, namespace: {ns}}}\n" + (
        'data: {"a b": x}\n'
    )


def test_a_tenant_writes_secrets_only_in_its_namespaces(served):
    """Tenants may write namespaced kinds in their namespaces (upstream's admin role)."""
    served.ok(
        "create", "secret", "generic", "alice-db", "-n", "kestrel-web",
        "--from-literal=k=v", context=ALICE,
    )  # fmt: skip
    assert "alice-db" in served.ok("get", "secrets", "-n", "kestrel-web", context=ALICE)
    refused = served.kubectl(
        "create", "secret", "generic", "x", "-n", "default", "--from-literal=k=v",
        context=ALICE,
    )  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'error: failed to create secret secrets is forbidden: User "alice" cannot create '
        'resource "secrets" in API group "" in the namespace "default"'
    )


def test_quota_counts_configmaps_node_ports_and_service_accounts(served, ns):
    """Legacy object counts and services.nodeports: a NodePort Service refused by a quota
    of 0, the common multi-tenant rule; kube-root-ca.crt counts as a ConfigMap, as on a
    real cluster."""
    eventually(lambda: served.kubectl("get", "cm", "kube-root-ca.crt", "-n", ns).returncode == 0)
    eventually(lambda: served.kubectl("get", "sa", "default", "-n", ns).returncode == 0)
    served.ok(
        "create", "quota", "tenant", "-n", ns,
        "--hard=configmaps=2,secrets=5,services=2,services.nodeports=0,"
        "services.loadbalancers=0,count/serviceaccounts=2",
    )  # fmt: skip
    eventually(lambda: "configmaps: 1/2" in served.ok("get", "quota", "tenant", "-n", ns))
    refused = served.kubectl("create", "service", "nodeport", "web", "-n", ns, "--tcp=80:8080")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'error: failed to create NodePort service: services "web" is forbidden: exceeded '
        "quota: tenant, requested: services.nodeports=1, used: services.nodeports=0, "
        "limited: services.nodeports=0"
    )
    served.ok("create", "service", "clusterip", "web", "-n", ns, "--tcp=80:8080")
    served.ok("create", "configmap", "one", "-n", ns, "--from-literal=a=b")
    full = served.kubectl("create", "configmap", "two", "-n", ns, "--from-literal=a=b")
    assert full.stderr.strip() == (
        'error: failed to create configmap: configmaps "two" is forbidden: exceeded quota: '
        "tenant, requested: configmaps=1, used: configmaps=2, limited: configmaps=2"
    )
    served.ok("create", "sa", "bot", "-n", ns)
    assert (
        "exceeded quota: tenant, requested: count/serviceaccounts=1"
        in served.kubectl("create", "sa", "bot2", "-n", ns).stderr
    )
    described = served.ok("describe", "quota", "tenant", "-n", ns)
    for line in (
        "configmaps              2     2",
        "count/serviceaccounts   2     2",
        "services                1     2",
        "services.nodeports      0     0",
    ):
        assert line in described
    # Deleting gives the charge back (the controller's replenishment).
    served.ok("delete", "configmap", "one", "-n", ns)
    eventually(lambda: "configmaps: 1/2" in served.ok("get", "quota", "tenant", "-n", ns))


def test_the_python_client_writes_string_data_and_reads_data(served, ns):
    """Convert_v1_Secret_To_core_Secret: stringData merges into data, never comes back."""
    with served.client() as api:
        core = k8s.CoreV1Api(api)
        body = k8s.V1Secret(
            metadata=k8s.V1ObjectMeta(name="py", namespace=ns),
            data={"kept": base64.b64encode(b"old").decode()},
            string_data={"password": "hunter2"},
        )
        created = core.create_namespaced_secret(ns, body)
        assert created.string_data is None
        assert created.type == "Opaque"
        read = core.read_namespaced_secret("py", ns)
        assert {k: base64.b64decode(v) for k, v in read.data.items()} == {
            "kept": b"old",
            "password": b"hunter2",
        }
        config_map = core.create_namespaced_config_map(
            ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="py"), data={"a": "1"})
        )
        assert config_map.data == {"a": "1"}
        assert eventually(
            lambda: [sa.metadata.name for sa in core.list_namespaced_service_account(ns).items]
        ) == ["default"]
        # A watch with a label selector, resumed from a list's resourceVersion.
        version = core.list_namespaced_config_map(ns).metadata.resource_version
        for name, labels in (("plain", None), ("labelled", {"tier": "web"})):
            core.create_namespaced_config_map(
                ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name, labels=labels))
            )
        stream = k8s_watch.Watch().stream(
            core.list_namespaced_config_map, ns, label_selector="tier=web",
            resource_version=version, timeout_seconds=2,
        )  # fmt: skip
        seen = [(event["type"], event["object"].metadata.name) for event in stream]
        assert seen == [("ADDED", "labelled")]


def test_a_replace_of_a_recreated_object_is_a_storage_conflict(served, ns):
    """A PUT's uid is a storage precondition (``rest.DefaultUpdatedObjectInfo``'s
    ``Preconditions``, checked by ``GuaranteedUpdate`` before admission; the text is the
    storage layer's ``invalid object`` error in ``InterpretUpdateError``'s conflict)."""
    served.ok("create", "configmap", "old", "-n", ns, "--from-literal=level=info")
    saved = _yaml(served, "cm", "old", "-n", ns)
    served.ok("delete", "cm", "old", "-n", ns)
    served.ok("create", "configmap", "old", "-n", ns, "--from-literal=level=debug")
    uid = _yaml(served, "cm", "old", "-n", ns)["metadata"]["uid"]
    del saved["metadata"]["resourceVersion"]
    refused = served.kubectl("replace", "-f", "-", stdin=yaml.safe_dump(saved))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Conflict): error when replacing "STDIN": Operation cannot be '
        'fulfilled on configmaps "old": StorageError: invalid object, Code: 4, Key: '
        f"/registry/configmaps/{ns}/old, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: {saved['metadata']['uid']}, UID in "
        f"object meta: {uid}"
    )
    assert _yaml(served, "cm", "old", "-n", ns)["data"] == {"level": "debug"}
