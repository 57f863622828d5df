"""``kubeprio serve --enable-admission-plugins ... --disable-admission-plugins ...`` with the
real kubectl (v1.32).

One server, started as a cluster whose kube-apiserver runs without ``Priority`` and
``LimitRanger`` and with ``NamespaceAutoProvision`` and ``PodNodeSelector`` (a plugin
kubeprio accepts and does not implement). Upstream rules checked: a plugin that is off does
nothing (``enabledPluginNames`` in ``staging/src/k8s.io/apiserver/pkg/server/options/
admission.go``): no priority is resolved (``spec.priority`` stays unset, a class that does
not exist is not refused, a client may set the number itself, as ``Priority``'s
``admitPod`` would forbid), no LimitRange defaults; ``NamespaceAutoProvision``
(``plugin/pkg/admission/namespace/autoprovision``) creates the namespace a create names.
The start-up lines list the plugins kubeprio runs, in order, and name the accepted plugin
that does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.serving import ServeProcess, needs_kubectl, new_namespace, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

FLAGS = (
    "--disable-admission-plugins=Priority,LimitRanger",
    "--enable-admission-plugins",
    "PodNodeSelector,NamespaceAutoProvision",
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-admission-plugins", FLAGS) as server:
        server.ok("create", "priorityclass", "high", "--value=1000")
        yield server


def _apply(server: ServeProcess, tmp_path: Path, text: str) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    return server.ok("apply", "-f", str(path))


def _pod(name: str, ns: str, extra: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n{extra}  containers: [{{name: c, image: nginx}}]\n"
    )


def test_start_up_lists_the_plugins_and_names_the_one_without_effect(served):
    log = served.log()
    assert (
        "kubeprio serve: admission plugins NamespaceAutoProvision,NamespaceLifecycle,"
        "ServiceAccount,SystemPriorityClass,TenantPriorityClass,DefaultTolerationSeconds,DefaultStorageClass,StorageObjectInUseProtection,RuntimeClass,"
        "CertificateApproval,CertificateSigning,CertificateSubjectRestriction,DefaultIngressClass,"
        "MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,ResourceQuota\n"
    ) in log
    assert "note: accepted, but not implemented by kubeprio (no effect): PodNodeSelector\n" in log


def test_without_priority_admission_a_pod_keeps_no_priority(served, tmp_path):
    ns = new_namespace(served, "noprio")
    text = _pod("web", ns, "  priorityClassName: high\n") + "---\n"
    text += _pod("ghost", ns, "  priorityClassName: nosuch\n") + "---\n"
    text += _pod("self-made", ns, "  priority: 7\n")
    assert _apply(served, tmp_path, text) == (
        "pod/web created\npod/ghost created\npod/self-made created\n"
    )
    out = served.ok(
        "get", "pods", "-n", ns, "--sort-by=.metadata.name", "-o",
        "custom-columns=NAME:.metadata.name,CLASS:.spec.priorityClassName,"
        "PRIORITY:.spec.priority,POLICY:.spec.preemptionPolicy",
    )  # fmt: skip
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "CLASS", "PRIORITY", "POLICY"],
        ["ghost", "nosuch", "<none>", "<none>"],
        ["self-made", "<none>", "7", "<none>"],
        ["web", "high", "<none>", "<none>"],
    ]


def test_without_limit_ranger_a_limit_range_sets_no_defaults(served, tmp_path):
    ns = new_namespace(served, "nolimits")
    text = (
        f"apiVersion: v1\nkind: LimitRange\nmetadata: {{name: defaults, namespace: {ns}}}\n"
        "spec:\n  limits:\n  - type: Container\n    defaultRequest: {cpu: 100m}\n"
        "    max: {cpu: 500m}\n---\n"
    )
    text += _pod("big", ns).replace(
        "image: nginx}", "image: nginx, resources: {requests: {cpu: '2'}}}"
    )
    assert _apply(served, tmp_path, text) == "limitrange/defaults created\npod/big created\n"
    pod = served.json("get", "pod", "big", "-n", ns)
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "2"}}
    assert "kubernetes.io/limit-ranger" not in pod["metadata"].get("annotations", {})


def test_namespace_auto_provision_creates_the_namespace_of_a_create(served):
    assert served.ok("run", "p", "--image=nginx", "-n", "brand-new") == "pod/p created\n"
    assert served.ok("get", "ns", "brand-new", "-o", "name") == "namespace/brand-new\n"
