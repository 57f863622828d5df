"""``kubeprio check`` (issue 2 section 6, last bullet) on the bundled examples and on bad input.

Runs the real command line (``kubeprio.cli.main``) and reads what it prints: text
(a table, then every error in full) and ``--output json`` (one array, one entry per
input object, exactly the issue's keys). Exit status 0 when everything was admitted,
1 on any rejection, 2 for a path that does not exist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubeprio.cli import main
from tests.conftest import REPO_ROOT

KEYS = [
    "kind",
    "namespace",
    "name",
    "allowed",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "code",
    "reason",
    "message",
    "warnings",
]
ALLOWED_TEXT = "allowed: uber-user-preempt-high, uber-user-preempt-medium, uber-user-significant"


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", "--output", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


def entry(kind: str, namespace: str | None, name: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "allowed": True,
        "priority": None,
        "priorityClassName": None,
        "preemptionPolicy": None,
        "code": None,
        "reason": None,
        "message": None,
        "warnings": [],
    }
    base.update(fields)
    return base


def test_kestrel_example_is_admitted(capsys: pytest.CaptureFixture[str]) -> None:
    """README's main command: the seed-004 profile passes admission as a whole."""
    code, entries = run_json(capsys, "examples/kestrel")
    assert code == 0
    assert all(list(e) == KEYS for e in entries)
    assert all(e["allowed"] for e in entries)
    by_name = {(e["kind"], e["name"]): e for e in entries}
    assert by_name[("Pod", "scratch")] == entry(
        "Pod",
        "kestrel-research",
        "scratch",
        priority=500,
        priorityClassName="uber-user-significant",
        preemptionPolicy="Never",
    )
    assert by_name[("Deployment", "web")] == entry(
        "Deployment",
        "kestrel-web",
        "web",
        priority=2000,
        priorityClassName="uber-user-preempt-high",
        preemptionPolicy="PreemptLowerPriority",
    )
    assert by_name[("Job", "research-run")]["priority"] == 1000
    assert by_name[("Deployment", "metrics-agent")]["priority"] == 900_000_000
    assert by_name[("PriorityClass", "uber-user-significant")] == entry(
        "PriorityClass", None, "uber-user-significant"
    )
    assert [e["name"] for e in entries[:3]] == [
        "uber-user-significant",
        "uber-user-preempt-medium",
        "uber-user-preempt-high",
    ]


def test_kestrel_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "examples/kestrel"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "#",
        "KIND",
        "NAMESPACE",
        "NAME",
        "RESULT",
        "PRIORITY",
        "CLASS",
        "POLICY",
        "TENANT",
    ]
    scratch = next(line for line in lines if " scratch " in line)
    assert scratch.split() == [
        "13",
        "Pod",
        "kestrel-research",
        "scratch",
        "created",
        "500",
        "uber-user-significant",
        "Never",
        "kestrel",
    ]
    assert lines[-1] == "15 objects: 15 admitted, 0 rejected"
    assert all(line == line.rstrip() for line in lines)


def test_rejected_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, entries = run_json(capsys, "examples/kestrel", "examples/kestrel-rejected")
    assert code == 1
    rejected = [e for e in entries if not e["allowed"]]
    assert rejected == [
        entry(
            "Pod",
            "kestrel-research",
            "sneaky-infra",
            allowed=False,
            code=403,
            reason="Forbidden",
            message='pods "sneaky-infra" is forbidden: PriorityClass "uber-infra-critical" is '
            f'not allowed in namespace "kestrel-research" (tenant "kestrel"); {ALLOWED_TEXT}',
        ),
        entry(
            "Deployment",
            "kestrel-web",
            "dashboard",
            allowed=False,
            code=403,
            reason="Forbidden",
            message='deployments.apps "dashboard" is forbidden: pod template: PriorityClass '
            '"uber-user-important" is not allowed in namespace "kestrel-web" (tenant "kestrel"); '
            f"{ALLOWED_TEXT}",
        ),
        entry(
            "Pod",
            "kestrel-web",
            "stale-priority",
            allowed=False,
            code=403,
            reason="Forbidden",
            message='pods "stale-priority" is forbidden: the integer value of priority (1000) '
            "must not be provided in pod spec; priority admission controller computed 2000 from "
            "the given PriorityClass name",
        ),
        entry(
            "PriorityClass",
            None,
            "system-kestrel-critical",
            allowed=False,
            code=422,
            reason="Invalid",
            message='PriorityClass.scheduling.k8s.io "system-kestrel-critical" is invalid: '
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system use only. error: system-kestrel-critical is not a known system priority "
            "class",
        ),
    ]


def test_rejections_are_printed_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "examples/kestrel", "examples/kestrel-rejected"]) == 1
    out = capsys.readouterr().out
    assert (
        "#16 Pod kestrel-research/sneaky-infra (examples/kestrel-rejected/rejected.yaml): "
        "403 Forbidden\n"
        '    pods "sneaky-infra" is forbidden: PriorityClass "uber-infra-critical" is not '
        f'allowed in namespace "kestrel-research" (tenant "kestrel"); {ALLOWED_TEXT}\n'
    ) in out
    assert out.endswith("19 objects: 15 admitted, 4 rejected\n")


def test_real_cluster_dump(capsys: pytest.CaptureFixture[str]) -> None:
    """A kubectl-style List with managedFields, status and unmodelled fields."""
    code, entries = run_json(capsys, "examples/real-cluster-dump")
    assert code == 0, [e for e in entries if not e["allowed"]]
    summary = [(e["kind"], e["name"], e["priority"], e["priorityClassName"]) for e in entries]
    assert ("Pod", "coredns-5d78c9869d-x8k2n", 2_000_000_000, "system-cluster-critical") in summary
    assert ("Pod", "nightly-report-28940640-q7w2x", 100, "batch-default") in summary
    assert ("ReplicaSet", "checkout-6f7c8b9d4", 100_000, "shop-critical") in summary
    assert main(["check", "examples/real-cluster-dump"]) == 0
    text = capsys.readouterr().out
    # The system classes and default namespaces already exist: applied as updates.
    assert " system-node-critical " in next(
        line for line in text.splitlines() if "system-node-critical" in line and "updated" in line
    )


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_bad_input_is_reported_per_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = write(
        tmp_path,
        "bad.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\n"
        "value: 3000000000\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: default}\nspec:\n"
        "  containers:\n  - name: c\n    resources: {requests: {cpu: 1x}}\n"
        "---\napiVersion: v9\nkind: Pod\nmetadata: {name: v}\n"
        "---\napiVersion: v1\nkind: Gadget\nmetadata: {name: g}\n"
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: ok}\n"
        "value: 7\n",
    )
    broken = write(tmp_path, "broken.json", '{"kind": "Pod",')
    code, entries = run_json(capsys, bad, broken)
    assert code == 1
    assert [(e["kind"], e["name"], e["allowed"], e["code"]) for e in entries] == [
        ("PriorityClass", "huge", False, 400),
        ("Pod", "q", False, 400),
        ("Pod", "v", False, 400),
        ("Gadget", "g", False, 400),
        ("PriorityClass", "ok", True, None),
        (None, None, False, 400),
    ]
    assert [e["message"] for e in entries[:4]] == [
        f'{bad} (document 1): PriorityClass in version "v1" cannot be handled as a '
        "PriorityClass: json: cannot unmarshal number 3000000000 into Go struct field "
        "PriorityClass.value of type int32 (field value)",
        f'{bad} (document 2): Pod in version "v1" cannot be handled as a Pod: quantities must '
        "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
        "(field spec.containers[0].resources.requests[cpu])",
        f'{bad} (document 3): no kind "Pod" is registered for version "v9"',
        f'{bad} (document 4): no kind "Gadget" is registered for version "v1"',
    ]
    assert entries[5]["reason"] == "BadRequest"
    assert entries[5]["message"].startswith(f"{broken}: invalid YAML")


def test_later_documents_are_applied_as_updates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Update rules are checked: value immutable, description mutable, same doc unchanged."""
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: tier1}\n"
    path = write(
        tmp_path,
        "updates.yaml",
        f"{pc}value: 100\n---\n{pc}value: 100\n---\n{pc}value: 100\ndescription: edited\n"
        f"---\n{pc}value: 200\n",
    )
    code, entries = run_json(capsys, path)
    assert code == 1
    assert [e["allowed"] for e in entries] == [True, True, True, False]
    assert entries[3]["message"] == (
        'PriorityClass.scheduling.k8s.io "tier1" is invalid: value: Forbidden: may not be '
        "changed in an update."
    )
    assert main(["check", path]) == 1
    results = [line.split()[3] for line in capsys.readouterr().out.splitlines()[1:5]]
    assert results == ["created", "unchanged", "updated", "rejected"]


def test_existing_objects_from_another_cluster_are_applied_without_its_uid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A dump carries the source cluster's uid and resourceVersion for objects that exist here.

    Upstream refuses a different uid on update (``metadata.uid`` is immutable,
    ValidateObjectMetaUpdate in apimachinery/pkg/api/validation/objectmeta.go), so, like the
    stale resourceVersion, check drops it and checks the update rules instead.
    """
    path = write(
        tmp_path,
        "dump.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n"
        "  uid: 6b0c2f9e-61c4-4d0e-9d52-2f3e0f2b7d11\n  resourceVersion: '42'\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n"
        "  name: system-node-critical\n  uid: f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9\n"
        "value: 2000001000\n",
    )
    code, entries = run_json(capsys, path)
    assert code == 0, entries
    assert [(e["kind"], e["name"], e["allowed"]) for e in entries] == [
        ("Namespace", "default", True),
        ("PriorityClass", "system-node-critical", True),
    ]


def test_duplicate_global_default_and_lists(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A JSON `kind: List` and a JSON array both expand; the second default is refused."""
    items = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": True,
        }
        for name, value in (("low", 10), ("lower", 5))
    ]
    listed = write(tmp_path, "a/list.json", json.dumps({"kind": "List", "items": items[:1]}))
    write(tmp_path, "b/array.json", json.dumps(items[1:]))
    code, entries = run_json(capsys, str(tmp_path))
    assert code == 1
    assert entries[0]["allowed"]
    assert entries[1]["message"] == (
        'priorityclasses.scheduling.k8s.io "lower" is forbidden: PriorityClass low is already '
        "marked as default. Only one default can exist"
    )
    assert listed.endswith("list.json")


def test_directories_are_walked_recursively_in_sorted_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def ns(name: str) -> str:
        return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"

    write(tmp_path, "b.yaml", ns("second"))
    write(tmp_path, "a/z.yml", ns("first"))
    write(
        tmp_path,
        "c.json",
        json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "third"}}),
    )
    write(tmp_path, ".hidden/x.yaml", ns("hidden"))
    write(tmp_path, "notes.txt", "not a manifest")
    code, entries = run_json(capsys, str(tmp_path))
    assert code == 0
    assert [e["name"] for e in entries] == ["first", "second", "third"]


def test_pods_without_namespace_go_to_default_and_namespaces_are_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(
        tmp_path,
        "pods.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: busybox}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: undeclared}\n"
        "spec: {containers: [{name: c, image: busybox}]}\n",
    )
    code, entries = run_json(capsys, path)
    assert code == 0
    assert [(e["namespace"], e["priority"], e["preemptionPolicy"]) for e in entries] == [
        ("default", 0, "PreemptLowerPriority"),
        ("undeclared", 0, "PreemptLowerPriority"),
    ]


def test_refused_pod_does_not_leave_its_namespace_behind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(
        tmp_path,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: fresh}\n"
        "spec: {priorityClassName: missing, containers: [{name: c, image: busybox}]}\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: fresh}\n",
    )
    code, entries = run_json(capsys, path)
    assert code == 1
    assert [(e["kind"], e["allowed"]) for e in entries] == [("Pod", False), ("Namespace", True)]
    assert main(["check", path]) == 1
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:3]]
    assert [row[1:4] for row in rows] == [["Pod", "fresh", "a"], ["Namespace", "fresh", "created"]]


def test_workload_template_with_an_unknown_class_warns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(
        tmp_path,
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n"
        "    spec: {priorityClassName: missing, containers: [{name: c, image: busybox}]}\n",
    )
    code, entries = run_json(capsys, path)
    assert code == 0
    assert entries[0]["priority"] is None
    (warning,) = entries[0]["warnings"]
    assert warning.startswith('pods created from this template would be rejected: pods "web-')
    assert warning.endswith('" is forbidden: no PriorityClass with name missing was found')


def test_missing_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "does/not/exist.yaml"]) == 2
    assert "does/not/exist.yaml: no such file or directory" in capsys.readouterr().err


def test_same_input_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "-o", "json", "examples/kestrel", "examples/kestrel-rejected"])
    first = capsys.readouterr().out
    main(["check", "-o", "json", "examples/kestrel", "examples/kestrel-rejected"])
    assert capsys.readouterr().out == first
