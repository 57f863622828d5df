"""The ServiceAccount admission plugin in a live ``kubeprio serve``, with the real kubectl.

What a user of a real cluster sees (``plugin/pkg/admission/serviceaccount/admission.go``,
v1.32, with the service account controller of
``pkg/controller/serviceaccount/serviceaccounts_controller.go``):

* ``kubectl create ns x && kubectl run p --image=nginx -n x`` works at once: the controller
  has made ``default`` before the pod arrives, and ``kubectl get pod -o yaml`` shows
  ``serviceAccountName``/``serviceAccount: default`` and the projected ``kube-api-access-*``
  volume mounted read-only at ``/var/run/secrets/kubernetes.io/serviceaccount``;
* a pod naming an account that does not exist is kubectl's one ``Error from server
  (Forbidden)`` line, and nothing is stored;
* ``automountServiceAccountToken: false`` on the account means no volume; pods the
  ReplicaSet controller makes get the volume too; ``kubectl apply`` of the same pod
  manifest twice is ``unchanged`` (the injected volume is not the user's to lose);
* a mirror pod may not name a service account.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, new_namespace, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-serviceaccount", ["--nodes", "1"]) as server:
        yield server


@pytest.fixture
def ns(served: ServeProcess) -> str:
    """A namespace made a moment ago (no waiting for its default account)."""
    name = new_namespace(served, "sa")
    return name


def _pod(served: ServeProcess, name: str, ns: str) -> dict:
    return yaml.safe_load(served.ok("get", "pod", name, "-n", ns, "-o", "yaml"))


def _token_volume(spec: dict) -> str:
    """The ``kube-api-access-*`` volume, checked field by field; its name."""
    (volume,) = spec["volumes"]
    name = volume["name"]
    assert name.startswith("kube-api-access-")
    assert len(name) == len("kube-api-access-") + 5
    assert volume["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    "name": "kube-root-ca.crt",
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            "path": "namespace",
                        }
                    ]
                }
            },
        ],
    }
    return name


def test_kubectl_run_in_a_new_namespace_gets_the_default_account_and_its_token(served, ns):
    served.ok("run", "p", "--image=nginx", "-n", ns)
    spec = _pod(served, "p", ns)["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    volume = _token_volume(spec)
    assert spec["containers"][0]["volumeMounts"] == [
        {"mountPath": TOKEN_PATH, "name": volume, "readOnly": True}
    ]


def test_a_pod_naming_a_missing_account_is_forbidden_and_not_stored(served, ns):
    result = served.kubectl(
        "run", "q", "--image=nginx", "-n", ns, '--overrides={"spec":{"serviceAccountName":"robot"}}'
    )
    assert result.returncode == 1
    assert result.stderr == (
        f'Error from server (Forbidden): pods "q" is forbidden: error looking up service account '
        f'{ns}/robot: serviceaccount "robot" not found\n'
    )
    manifest = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: q, namespace: {ns}}}\n"
        "spec: {serviceAccountName: robot, containers: [{name: c, image: nginx}]}\n"
    )
    result = served.kubectl("create", "-f", "-", stdin=manifest)
    assert result.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": pods "q" is forbidden: '
        f'error looking up service account {ns}/robot: serviceaccount "robot" not found\n'
    )
    missing = served.kubectl("get", "pod", "q", "-n", ns)
    assert missing.stderr == 'Error from server (NotFound): pods "q" not found\n'
    # Once the account exists, the same pod is admitted with it.
    served.ok("create", "sa", "robot", "-n", ns)
    served.ok("create", "-f", "-", stdin=manifest)
    spec = _pod(served, "q", ns)["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("robot", "robot")
    _token_volume(spec)


def test_an_account_that_opts_out_gets_no_token_volume(served, ns):
    served.ok(
        "apply",
        "-f",
        "-",
        stdin=(
            f"apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: quiet, namespace: {ns}}}\n"
            "automountServiceAccountToken: false\n"
        ),
    )
    served.ok(
        "run", "p", "--image=nginx", "-n", ns, '--overrides={"spec":{"serviceAccountName":"quiet"}}'
    )
    spec = _pod(served, "p", ns)["spec"]
    assert spec["serviceAccountName"] == "quiet"
    assert "volumes" not in spec
    assert "volumeMounts" not in spec["containers"][0]


def test_controller_made_pods_get_the_token_volume(served, ns):
    served.ok("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", ns)

    def both() -> list[dict] | None:
        items = served.json("get", "pods", "-n", ns, "-l", "app=web")["items"]
        return items if len(items) == 2 else None

    pods = eventually(both)
    names = set()
    for pod in pods:
        assert pod["spec"]["serviceAccountName"] == "default"
        names.add(_token_volume(pod["spec"]))
    assert len(names) == 2  # each pod its own random suffix
    template = served.json("get", "deployment", "web", "-n", ns)["spec"]["template"]["spec"]
    assert "volumes" not in template
    assert "serviceAccountName" not in template


def test_applying_the_same_pod_manifest_twice_is_unchanged(served, ns):
    manifest = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: a, namespace: {ns}}}\n"
        "spec: {containers: [{name: c, image: nginx}]}\n"
    )
    assert served.ok("apply", "-f", "-", stdin=manifest) == "pod/a created\n"
    assert served.ok("apply", "-f", "-", stdin=manifest) == "pod/a unchanged\n"
    _token_volume(_pod(served, "a", ns)["spec"])


def test_a_new_namespace_is_ready_for_pods_at_once(served):
    """The race upstream papers over with ~1 s of retries: serve's driver runs the service
    account controller on the namespace write, before kubectl's next request."""
    for _ in range(5):
        name = new_namespace(served, "sa")
        served.ok("run", "p", "--image=nginx", "-n", name)


def test_a_mirror_pod_may_not_name_a_service_account(served, ns):
    manifest = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: m, namespace: {ns}, "
        "annotations: {kubernetes.io/config.mirror: mirror}}\n"
        "spec: {serviceAccountName: default, containers: [{name: c, image: nginx}]}\n"
    )
    result = served.kubectl("create", "-f", "-", stdin=manifest)
    assert result.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": pods "m" is forbidden: '
        "a mirror pod may not reference service accounts\n"
    )
    served.ok("create", "-f", "-", stdin=manifest.replace("serviceAccountName: default, ", ""))
    spec = _pod(served, "m", ns)["spec"]
    assert "serviceAccountName" not in spec
    assert "volumes" not in spec
