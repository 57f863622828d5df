"""A second kubectl audit against upstream v1.32: the commands the first one left unpinned,
pinned where ``kubeprio serve`` answered differently (and a few that already matched).

* ``kubectl delete --cascade=orphan|foreground`` and a Job deleted without a policy: the
  generic registry store puts the ``orphan`` / ``foregroundDeletion`` finalizer on the
  owner (``deletionFinalizersForGarbageCollection`` in
  ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``) and the
  garbage collector orphans or deletes the dependents before removing it; batch/v1 Jobs
  orphan by default and warn (``pkg/registry/batch/job/storage/storage.go``). The server
  used to remove the owner at once and let the collector delete everything.
* ``kubectl patch`` error paths: a JSON patch operation that does not apply is
  ``NewGenericServerResponse(422)`` in ``applyJSPatch``
  (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go``), which kubectl prints
  as "The request is invalid: the server rejected our request..."; a strategic merge
  error ``interpretStrategicMergePatchError`` passes on is a plain error (500, "Error from
  server: ..."); a body of the wrong shape fails the strict decode ("error decoding
  patch: ..."). kubectl used to print only 'The Deployment "web" is invalid'.
* ``kubectl auth can-i --list`` lists each discovery path as often as upstream's
  bootstrap roles do (``system:discovery`` once, with ``system:public-info-viewer`` twice).
* An orphaned dependent is served without ``ownerReferences`` (``ObjectMeta``'s
  ``omitempty``): kubectl's ``custom-columns`` of ``ownerReferences[0]`` print ``<none>``,
  where an empty list made them fail with an index error.
* Pinned as the same: ``get events --field-selector``, ``events --for``, ``run
  --overrides`` with a priority class, and ``edit`` of an invalid change reopening with
  the server's causes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.serving import (
    KUBECTL,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: "nginx:1.25"}]
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: busybox}]
"""

JOB_WARNING = (
    "Warning: child pods are preserved by default when jobs are deleted; set "
    "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
    "suppress this warning\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "kubectlaudit2", ["--nodes", "2"]) as process:
        yield process


def _rolled_out_web(server: ServeProcess, ns: str) -> str:
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    server.ok("rollout", "status", "deploy/web", "-n", ns, "--timeout=30s")
    (rs,) = server.json("get", "rs", "-n", ns)["items"]
    name: str = rs["metadata"]["name"]
    return name


def _pods(server: ServeProcess, ns: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in server.json("get", "pods", "-n", ns)["items"])


def test_delete_cascade_orphan_keeps_the_replicaset_and_its_pods(server: ServeProcess) -> None:
    ns = new_namespace(server, "orphan")
    rs_name = _rolled_out_web(server, ns)
    pods = _pods(server, ns)
    assert len(pods) == 2
    assert server.ok("delete", "deploy/web", "-n", ns, "--cascade=orphan") == (
        'deployment.apps "web" deleted\n'
    )

    def orphaned() -> bool | None:
        rs = server.json("get", "rs", rs_name, "-n", ns)
        return True if not rs["metadata"].get("ownerReferences") else None

    assert eventually(orphaned)
    assert _pods(server, ns) == pods
    # Served without the emptied list (ObjectMeta's omitempty), so kubectl finds no owner.
    owner_column = "custom-columns=OWNER:.metadata.ownerReferences[0].kind"
    assert server.ok("get", "rs", rs_name, "-n", ns, "-o", owner_column, "--no-headers") == (
        "<none>\n"
    )
    # A new Deployment with the same template adopts the orphan (and its pods) again.
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)

    def adopted() -> str | None:
        refs = server.json("get", "rs", rs_name, "-n", ns)["metadata"].get("ownerReferences")
        return refs[0]["name"] if refs else None

    assert eventually(adopted) == "web"
    assert _pods(server, ns) == pods


def test_delete_cascade_foreground_waits_for_the_dependents(server: ServeProcess) -> None:
    ns = new_namespace(server, "foreground")
    rs_name = _rolled_out_web(server, ns)
    # A finalizer of our own holds the ReplicaSet, so the owner stays visibly in deletion.
    server.ok(
        "patch", "rs", rs_name, "-n", ns, "--type=merge",
        "-p", '{"metadata":{"finalizers":["example.com/hold"]}}',
    )  # fmt: skip
    assert server.ok("delete", "deploy/web", "-n", ns, "--cascade=foreground", "--wait=false") == (
        'deployment.apps "web" deleted\n'
    )
    owner = server.json("get", "deploy/web", "-n", ns)["metadata"]
    assert owner["finalizers"] == ["foregroundDeletion"]
    assert owner["deletionTimestamp"]
    assert owner["deletionGracePeriodSeconds"] == 0
    eventually(
        lambda: server.json("get", "rs", rs_name, "-n", ns)["metadata"].get("deletionTimestamp")
    )
    server.ok(
        "patch", "rs", rs_name, "-n", ns, "--type=json",
        "-p", '[{"op":"remove","path":"/metadata/finalizers"}]',
    )  # fmt: skip
    server.ok("wait", "--for=delete", "deploy/web", "-n", ns, "--timeout=30s")
    assert server.ok("get", "rs", "-n", ns, "-o", "name") == ""


def test_a_job_deleted_without_a_policy_warns_and_keeps_its_pods(server: ServeProcess) -> None:
    ns = new_namespace(server, "jobs")
    server.ok("apply", "-n", ns, "-f", "-", stdin=JOB)
    (pod,) = eventually(lambda: _pods(server, ns) or None)
    # kubectl delete always sends a policy; a raw DELETE (as a client that sets none) does not.
    result = server.kubectl("delete", "--raw", f"/apis/batch/v1/namespaces/{ns}/jobs/once")
    assert result.returncode == 0, result.stderr
    assert result.stderr == JOB_WARNING
    eventually(lambda: "NotFound" in server.kubectl("get", "job/once", "-n", ns).stderr or None)
    left = server.json("get", "pod", pod, "-n", ns)["metadata"]
    assert not left.get("ownerReferences")
    assert not left.get("deletionTimestamp")


PATCH_ERRORS = [
    # (patch type, patch, kubectl's stderr): upstream's answers in patch.go.
    (
        "json",
        '[{"op":"test","path":"/spec/replicas","value":5}]',
        "The request is invalid: the server rejected our request due to an error in our request\n",
    ),
    (
        "json",
        '[{"op":"bogus","path":"/spec/replicas"}]',
        "The request is invalid: the server rejected our request due to an error in our request\n",
    ),
    (
        "json",
        '{"op":"test"}',
        "Error from server (BadRequest): error decoding patch: json: cannot unmarshal object "
        "into Go value of type []handlers.jsonPatchOp\n",
    ),
    (
        "strategic",
        '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}',
        "Error from server: map: map[image:x] does not contain declared merge key: name\n",
    ),
    (
        "merge",
        '{"spec":{"replicas":-1}}',
        'The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0\n",
    ),
]


def test_patch_errors_print_upstreams_texts(server: ServeProcess) -> None:
    ns = new_namespace(server, "patch")
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    before = server.json("get", "deploy/web", "-n", ns)["metadata"]["resourceVersion"]
    for patch_type, patch, expected in PATCH_ERRORS:
        result = server.kubectl(
            "patch", "deploy/web", "-n", ns, f"--type={patch_type}", "-p", patch
        )
        assert (result.returncode, result.stderr) == (1, expected), patch
    assert server.json("get", "deploy/web", "-n", ns)["metadata"]["resourceVersion"] == before


def test_can_i_list_shows_each_discovery_path_as_upstream(server: ServeProcess) -> None:
    ns = new_namespace(server, "cani")
    server.ok("create", "sa", "bob", "-n", ns)
    text = server.ok("auth", "can-i", "--list", "-n", ns, f"--as=system:serviceaccount:{ns}:bob")
    urls = [line.split()[0] for line in text.splitlines() if line.startswith(" ")]
    # system:discovery lists /api once; /healthz comes from it and system:public-info-viewer.
    assert urls.count("[/api]") == 1
    assert urls.count("[/apis/*]") == 1
    assert urls.count("[/healthz]") == 2
    assert urls.count("[/openid/v1/jwks]") == 1


def test_events_commands_and_run_overrides_match_upstream(server: ServeProcess) -> None:
    ns = new_namespace(server, "events")
    server.ok("create", "priorityclass", f"{ns}-high", "--value=1000")
    server.ok(
        "run", "x", "-n", ns, "--image=nginx", "--restart=Never",
        f'--overrides={{"spec":{{"priorityClassName":"{ns}-high"}}}}',
    )  # fmt: skip
    spec = server.json("get", "pod/x", "-n", ns)["spec"]
    assert (spec["priorityClassName"], spec["priority"]) == (f"{ns}-high", 1000)

    def started() -> str | None:
        text = server.ok("events", "-n", ns, "--for", "pod/x")
        return text if "Started" in text else None

    lines = eventually(started).splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert {line.split()[2] for line in lines[1:]} == {"Scheduled", "Pulled", "Created", "Started"}
    assert all(line.split()[3] == "Pod/x" for line in lines[1:])
    selected = server.ok(
        "get", "events", "-n", ns, "--field-selector", "involvedObject.name=x,reason=Scheduled"
    ).splitlines()
    assert selected[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert selected[1].split()[1:4] == ["Normal", "Scheduled", "pod/x"]
    assert len(selected) == 2
    warnings = server.kubectl("events", "-n", ns, "--types=Warning")
    assert (warnings.stdout, warnings.stderr) == ("", f"No events found in {ns} namespace.\n")


def test_edit_of_an_invalid_change_reopens_with_the_servers_causes(
    server: ServeProcess, tmp_path: Path
) -> None:
    ns = new_namespace(server, "edit")
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    editor = tmp_path / "editor.sh"
    # The first pass makes replicas negative; the reopened file is left as it is.
    editor.write_text(
        '#!/bin/sh\ngrep -q "replicas: -2" "$1" && exit 0\n'
        'sed -i "s/^  replicas: 2/  replicas: -2/" "$1"\n'
    )
    editor.chmod(0o755)
    env = dict(os.environ, EDITOR=str(editor), KUBE_EDITOR=str(editor), TMPDIR=str(tmp_path))
    assert KUBECTL is not None
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(server.kubeconfig), "--cache-dir",
         str(server.cache_dir), "edit", "deploy/web", "-n", ns],
        capture_output=True, text=True, env=env, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith('error: deployments.apps "web" is invalid\n')
    assert result.stderr.endswith("error: Edit cancelled, no valid changes were saved.\n")
    # kubectl keeps the reopened file, with the server's causes in its header.
    kept = result.stderr.split('A copy of your changes has been stored to "')[1].split('"')[0]
    header = Path(kept).read_text()
    assert '# deployments.apps "web" was not valid:\n' in header
    assert "# * spec.replicas: Invalid value: -2: must be greater than or equal to 0\n" in header
